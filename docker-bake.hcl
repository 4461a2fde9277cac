# docker buildx bake: the multi-arch image of archcrypt.
#
#   docker buildx bake --push                      # all four platforms, one manifest list
#   REGISTRY=registry.example.com/team VERSION=0.1.0 docker buildx bake --push
#
# Per architecture on native runners (no emulation anywhere), then one manifest list:
#
#   docker buildx bake --push archcrypt-arm64      # on an arm64 runner; likewise the others
#   docker buildx imagetools create -t ${REGISTRY}/archcrypt:${VERSION} \
#       ${REGISTRY}/archcrypt:${VERSION}-amd64 ${REGISTRY}/archcrypt:${VERSION}-arm64 \
#       ${REGISTRY}/archcrypt:${VERSION}-ppc64le ${REGISTRY}/archcrypt:${VERSION}-s390x
#
# The Dockerfile cross-compiles in a builder stage on the build machine's platform, so the
# all-platforms target is fast on any one machine as well.

variable "REGISTRY" {
  default = "ghcr.io/archcrypt"
}

variable "VERSION" {
  default = "0.1.0"
}

variable "REVISION" {
  default = ""
}

variable "PYTHON_VERSION" {
  default = "3.11"
}

group "default" {
  targets = ["archcrypt"]
}

group "per-arch" {
  targets = ["archcrypt-amd64", "archcrypt-arm64", "archcrypt-ppc64le", "archcrypt-s390x"]
}

target "_common" {
  context    = "."
  dockerfile = "Dockerfile"
  args = {
    PYTHON_VERSION = PYTHON_VERSION
    VERSION        = VERSION
    REVISION       = REVISION
    SOURCE         = "https://github.com/archcrypt/archcrypt"
  }
}

target "archcrypt" {
  inherits  = ["_common"]
  platforms = ["linux/amd64", "linux/arm64", "linux/ppc64le", "linux/s390x"]
  tags      = ["${REGISTRY}/archcrypt:${VERSION}", "${REGISTRY}/archcrypt:latest"]
}

target "archcrypt-amd64" {
  inherits  = ["_common"]
  platforms = ["linux/amd64"]
  tags      = ["${REGISTRY}/archcrypt:${VERSION}-amd64"]
}

target "archcrypt-arm64" {
  inherits  = ["_common"]
  platforms = ["linux/arm64"]
  tags      = ["${REGISTRY}/archcrypt:${VERSION}-arm64"]
}

target "archcrypt-ppc64le" {
  inherits  = ["_common"]
  platforms = ["linux/ppc64le"]
  tags      = ["${REGISTRY}/archcrypt:${VERSION}-ppc64le"]
}

target "archcrypt-s390x" {
  inherits  = ["_common"]
  platforms = ["linux/s390x"]
  tags      = ["${REGISTRY}/archcrypt:${VERSION}-s390x"]
}
