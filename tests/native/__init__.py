"""The crypto layer through the archcrypt.crypto facade (a package, so module names stay unique)."""
