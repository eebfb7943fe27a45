# -*- coding: utf-8 -*-

__path__ = __import__('pkgutil').extend_path(__path__, __name__)
__version__ = '0.4.0'
