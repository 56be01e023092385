#!/usr/bin/env bash
# install_test.sh BUILD_DIR SOURCE_DIR MAKE_TINY_RECURRENT
#
# Installs BUILD_DIR into a temporary prefix, builds the embedding samples
# out of tree against the installed package (CMake's find_package, and
# pkg-config for the C sample), runs them on the tiny recurrent model, and
# checks that they decode the same steps and match a whole-sequence run.
set -euo pipefail
build=$1 source=$2 make_model=$3

work=$(mktemp -d "${TMPDIR:-/tmp}/seqrt-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
pc=$(find "$prefix" -name seqrt.pc -path '*/pkgconfig/*' | head -n 1)
[[ -n $pc ]] || fail "no seqrt.pc installed under $prefix"
libdir=$(dirname "$(dirname "$pc")")
for file in include/seqrt/seqrt.h include/seqrt/seqrt.hpp \
            include/seqrt/seqrt_version.h bin/seqrt; do
  [[ -e $prefix/$file ]] || fail "$file was not installed"
done
[[ -e $libdir/cmake/seqrt/seqrtConfig.cmake ]] || fail "no seqrtConfig.cmake"
[[ -e $libdir/cmake/seqrt/seqrtConfigVersion.cmake ]] ||
  fail "no seqrtConfigVersion.cmake"
abi=$(sed -n 's/^#define SEQRT_ABI_VERSION \([0-9]*\)$/\1/p' \
        "$prefix/include/seqrt/seqrt_version.h")
[[ -e $libdir/libseqrt.so.$abi && -L $libdir/libseqrt.so ]] ||
  fail "libseqrt.so and libseqrt.so.$abi are not both in $libdir"
# Nothing installed may point back into the build tree.
if readelf -d "$libdir/libseqrt.so" "$prefix/bin/seqrt" | grep -q "$build"; then
  fail "an installed binary has a RUNPATH into the build tree"
fi

"$make_model" "$work/model" >/dev/null || fail "$make_model did not write the model"
model=$work/model/tiny_recurrent.seqrt
"$prefix/bin/seqrt" inspect "$model" >"$work/inspect.out" ||
  fail "the installed seqrt CLI does not run: $(cat "$work/inspect.out")"

# Out-of-tree builds with CMake against the prefix only.
for sample in embed_c embed_cpp; do
  cmake -S "$source/samples/$sample" -B "$work/$sample" \
        -DCMAKE_BUILD_TYPE=Debug -DCMAKE_PREFIX_PATH="$prefix" \
        >"$work/$sample.configure.log" 2>&1 ||
    fail "configuring $sample: $(cat "$work/$sample.configure.log")"
  cmake --build "$work/$sample" >"$work/$sample.build.log" 2>&1 ||
    fail "building $sample: $(cat "$work/$sample.build.log")"
  "$work/$sample/$sample" "$model" >"$work/$sample.out" 2>&1 ||
    fail "$sample failed: $(cat "$work/$sample.out")"
  steps=$(grep -c '^step ' "$work/$sample.out" || true)
  [[ $steps == 6 ]] || fail "$sample printed $steps decode steps, not 6"
  grep -q '^stream matches the whole-sequence run$' "$work/$sample.out" ||
    fail "$sample: the stream does not match the whole run"
done

# The C sample once more, built with pkg-config and a plain compiler call.
export PKG_CONFIG_PATH=$libdir/pkgconfig
# shellcheck disable=SC2046,SC2086  # word splitting of flags is wanted
"${CC:-cc}" ${CFLAGS:-} -std=c11 -Wall -Wextra -Werror \
  "$source/samples/embed_c/main.c" -o "$work/embed_c_pc" \
  $(pkg-config --cflags --libs seqrt) -lm -Wl,-rpath,"$libdir" ${LDFLAGS:-} ||
  fail "building embed_c with pkg-config"
"$work/embed_c_pc" "$model" >"$work/embed_c_pc.out" 2>&1 ||
  fail "embed_c (pkg-config build) failed: $(cat "$work/embed_c_pc.out")"
cmp -s "$work/embed_c.out" "$work/embed_c_pc.out" ||
  fail "the pkg-config and CMake builds of embed_c print different output"

# Both languages compute the same results and describe the model alike.
if ! diff "$work/embed_c.out" "$work/embed_cpp.out" >"$work/diff.out"; then
  fail "embed_c and embed_cpp differ:
$(cat "$work/diff.out")"
fi
cat "$work/embed_c.out"
echo "install_test: OK (prefix $prefix)"
