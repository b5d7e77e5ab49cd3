#!/bin/sh
# Run by CTest (tests/install/CMakeLists.txt, test "deb_install", label "install"):
#   deb_install_test.sh BUILD_DIR WORK_DIR SOURCE_DIR
# cpack makes the .deb of BUILD_DIR; its control fields and contents are checked with dpkg-deb (the Maintainer is
# the address in MAINTAINERS, not a placeholder; the man page and the bash completion are linked where man and
# bash-completion look). Then, where this runs as root with dpkg usable and nothing of mpspack installed here,
# the package is really installed with `dpkg -i`: `man -w mpspack` finds the page, bash-completion's loader finds
# the completion and it completes a command, and `dpkg -r` and `dpkg --purge` remove it without a warning and leave
# no /opt/mpspack. The package is purged when the script ends, however it ends. Without root, dpkg, man or
# bash-completion the installing half is skipped (exit 77, CTest "Skipped"), except under CI=true (CI's throwaway
# machine runs the tests as root with .ci/packages installed), where a missing prerequisite fails the test.
set -u
BUILD_DIR=$1 WORK_DIR=$2 SOURCE_DIR=$3

fail() { echo "FAIL: $*" >&2; exit 1; }
missing() {
  [ "${CI:-}" = true ] && fail "CI=true, and $*"
  echo "skipped: $*"
  exit 77
}

for tool in cpack dpkg-deb; do
  command -v $tool >/dev/null || missing "$tool is not installed"
done
rm -rf "$WORK_DIR" && mkdir -p "$WORK_DIR" || fail "cannot make $WORK_DIR"

# 1. The package, inspected.
cpack -G DEB --config "$BUILD_DIR/CPackConfig.cmake" -B "$WORK_DIR/out" >"$WORK_DIR/cpack.log" 2>&1 ||
  fail "cpack -G DEB failed: $(cat "$WORK_DIR/cpack.log")"
set -- "$WORK_DIR"/out/mpspack_*.deb
[ $# -eq 1 ] && [ -f "$1" ] || fail "cpack made '$*', expected one mpspack_*.deb"
deb=$1

maintainer=$(dpkg-deb -f "$deb" Maintainer) || fail "dpkg-deb -f $deb Maintainer failed"
kept=$(grep -v '^#' "$SOURCE_DIR/MAINTAINERS" | grep -m1 .)
[ "$maintainer" = "$kept" ] || fail "Maintainer is '$maintainer', MAINTAINERS says '$kept'"
echo "$maintainer" | grep -Eq '^[^<>@]+ <[^<>@ ]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+>$' ||
  fail "Maintainer '$maintainer' is not 'Name <address>'"
echo "$maintainer" | grep -Eiq 'example|\.invalid>|\.test>|\.local>|localhost|noreply|nobody|placeholder|changeme' &&
  fail "Maintainer '$maintainer' is a placeholder"

contents=$(dpkg-deb -c "$deb") || fail "dpkg-deb -c $deb failed"
has_link() {  # has_link LINK TARGET: the .deb holds exactly one entry LINK -> TARGET
  n=$(printf '%s\n' "$contents" | grep -c "^l.* \./$1 -> $2\$")
  [ "$n" -eq 1 ] || fail "the .deb does not hold the link /$1 -> $2 once:
$contents"
}
has_link usr/bin/mpspack /opt/mpspack/bin/mpspack
has_link usr/share/bash-completion/completions/mpspack /opt/mpspack/share/bash-completion/completions/mpspack
has_link usr/lib/python3/dist-packages/mpspack /opt/mpspack/lib/python/mpspack
man_built=no
if printf '%s\n' "$contents" | grep -q ' \./opt/mpspack/share/man/man1/mpspack\.1$'; then
  man_built=yes
  has_link usr/share/man/man1/mpspack.1 /opt/mpspack/share/man/man1/mpspack.1
elif command -v help2man >/dev/null; then
  fail "help2man is installed but the .deb holds no man page"
fi
printf '%s\n' "$contents" | grep -Eq '^d.* \./opt/?$' &&
  fail "the .deb lists the folder /opt, which dpkg would try to remove with the package"

# 2. Installed for real, only on a machine where that is safe and possible.
[ "$(id -u)" -eq 0 ] || missing "not root: installing the .deb needs root (the .deb itself was checked)"
command -v dpkg >/dev/null && dpkg --audit >/dev/null 2>&1 || missing "dpkg is not usable here"
[ "$man_built" = yes ] || missing "help2man is not installed, so the .deb has no man page to find"
command -v man >/dev/null || missing "man (Debian package man-db) is not installed"
[ -r /usr/share/bash-completion/bash_completion ] || missing "bash-completion is not installed"
# Slim container images tell dpkg to leave out man pages, which the package's link would then be.
excluded=$(cat /etc/dpkg/dpkg.cfg /etc/dpkg/dpkg.cfg.d/* 2>/dev/null | grep -E '^path-exclude[= ]+/usr/share/man')
[ -z "$excluded" ] || missing "dpkg leaves out man pages here ($excluded in /etc/dpkg/dpkg.cfg.d)"
# One run at a time on this machine, whichever build tree it comes from.
exec 9>/var/lock/mpspack-deb-install-test.lock || fail "cannot open /var/lock/mpspack-deb-install-test.lock"
flock -w 600 9 || fail "another deb_install test held /var/lock/mpspack-deb-install-test.lock for 10 minutes"
# Never replace an installed mpspack or files that another install put where the package goes.
if dpkg-query -W -f '${Status}' mpspack >/dev/null 2>&1; then
  echo "skipped: a package mpspack is known to dpkg here ($(dpkg-query -W -f '${Version} ${Status}' mpspack)); not replacing it"
  exit 77
fi
for p in /opt/mpspack /usr/bin/mpspack /usr/share/man/man1/mpspack.1 /usr/share/man/man1/mpspack.1.gz \
         /usr/share/bash-completion/completions/mpspack /usr/lib/python3/dist-packages/mpspack; do
  if [ -e "$p" ] || [ -L "$p" ]; then
    echo "skipped: $p exists and no package owns it; installing the .deb would replace it"
    exit 77
  fi
done

installed=no
cleanup() {
  if [ $installed = yes ]; then dpkg --purge mpspack >/dev/null 2>&1 || echo "dpkg --purge mpspack failed" >&2; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

quiet() {  # quiet WHAT COMMAND...: COMMAND succeeds and writes no warning or error to stderr
  what=$1; shift
  "$@" >"$WORK_DIR/out.log" 2>"$WORK_DIR/err.log" ||
    fail "$what failed: $(cat "$WORK_DIR/out.log" "$WORK_DIR/err.log")"
  grep -Eiq 'warn|error' "$WORK_DIR/err.log" && fail "$what wrote to stderr: $(cat "$WORK_DIR/err.log")"
  return 0
}
install_and_check() {
  installed=yes
  quiet "dpkg -i $deb" dpkg -i "$deb"
  [ "$(dpkg-query -W -f '${Status}' mpspack)" = "install ok installed" ] || fail "mpspack is not installed after dpkg -i"
  out=$(env -u LD_LIBRARY_PATH mpspack --version) || fail "mpspack --version failed after dpkg -i"
  case $out in "mpspack "*) ;; *) fail "mpspack --version printed '$out'" ;; esac
  [ "$(command -v mpspack)" = /usr/bin/mpspack ] || fail "mpspack on PATH is $(command -v mpspack), not /usr/bin/mpspack"

  page=$(env -u MANPATH man -w mpspack 2>&1) || fail "man -w mpspack found nothing: $page"
  [ "$(readlink -f "$page")" = /opt/mpspack/share/man/man1/mpspack.1 ] ||
    fail "man -w mpspack found '$page', not the installed page"
  env -u MANPATH MANWIDTH=80 man -P cat mpspack 2>/dev/null | grep -q 'mpspack' || fail "man mpspack shows no page"

  # The completion as an interactive shell gets it: bash-completion's loader sources it on first use.
  reply=$(bash --norc --noprofile -c '
    . /usr/share/bash-completion/bash_completion || exit 1
    __load_completion mpspack || _completion_loader mpspack
    complete -p mpspack || exit 1
    COMP_WORDS=(mpspack bui); COMP_CWORD=1; COMP_LINE="mpspack bui"; COMP_POINT=${#COMP_LINE}
    _mpspack mpspack bui mpspack
    printf "reply:%s\n" "${COMPREPLY[@]}"' 2>&1) || fail "bash-completion did not load the completion: $reply"
  echo "$reply" | grep -q '^complete -F _mpspack mpspack$' || fail "complete -p mpspack: $reply"
  echo "$reply" | grep -qx 'reply:build' || fail "completing 'mpspack bui' gave: $reply"

  # Debian's python3 imports the package through its link and loads the tree's C API library.
  if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    # Under the sanitizers their runtimes go first (cmake/sanitizer_env.cmake).
    pyenv=""
    [ -n "${MPSPACK_PYTHON_PRELOAD:-}" ] &&
      pyenv="LD_PRELOAD=$MPSPACK_PYTHON_PRELOAD ASAN_OPTIONS=detect_leaks=0:intercept_tls_get_addr=0"
    lib=$(cd / && env -u PYTHONPATH -u MPSPACK_LIBRARY $pyenv /usr/bin/python3 -c 'import mpspack; print(mpspack.library_path())' 2>&1) ||
      fail "python3 -c 'import mpspack' failed after dpkg -i: $lib"
    [ "$lib" = /opt/mpspack/lib/libmpspack_c.so.0 ] || fail "the installed package loaded '$lib'"
  fi
}

# Removed (dpkg -r), and once more installed and purged (dpkg --purge): no warning from dpkg either way, nothing of
# the package left, and /opt still there.
removed_by() {
  quiet "dpkg $1 mpspack" dpkg "$1" mpspack
  installed=no
  dpkg-query -W -f '${Status}' mpspack >/dev/null 2>&1 && fail "dpkg still knows mpspack after dpkg $1"
  for p in /opt/mpspack /usr/bin/mpspack /usr/share/man/man1/mpspack.1 /usr/share/bash-completion/completions/mpspack \
           /usr/lib/python3/dist-packages/mpspack
  do
    { [ -e "$p" ] || [ -L "$p" ]; } && fail "$p is still there after dpkg $1 mpspack"
  done
  [ -d /opt ] || fail "dpkg $1 mpspack removed /opt"
}
install_and_check
removed_by -r
install_and_check
removed_by --purge
rm -rf "$WORK_DIR"
echo "installed, found by man and bash-completion, removed and purged cleanly"
