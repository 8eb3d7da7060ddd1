#!/bin/sh
# Installs what collsim needs from Debian packages, only what is missing.
# Usage: tools/install-deps.sh   (as root, or with sudo available)
set -eu
pkgs="build-essential meson ninja-build pkg-config libyaml-dev libgsl-dev check python3 gnuplot-nox openmpi-bin libopenmpi-dev valgrind clang libclang-rt-dev"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "installing:$missing" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
