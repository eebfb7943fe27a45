"""Will it run everywhere: one kernel compiled for every GPU of the catalogue and every autotune
config (`matrix.fits`, the `fits` command and the page's Every GPU view)."""
