"""archcrypt: symmetric crypto over HTTP, backed by hand-tuned C kernels.

Import-light on purpose: the native library loads only when archcrypt.crypto is imported.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
