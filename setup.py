"""Packaging (metadata in pyproject.toml): the gallery (kernels/) and the recorded benchmarks and
profiles (assets/) live at the top of the checkout, where users open them by path; an installed
package carries them inside itself as `inspector.gallery` and `inspector.assets`
(`inspector.places` finds either)."""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["inspector", "inspector.*"]) + ["inspector.gallery", "inspector.assets"],
    package_dir={"inspector.gallery": "kernels", "inspector.assets": "assets"},
)
