#!/bin/sh
# tests/loader/exports.sh - what the built shared objects export (TAP)
#
# Every provider module (plugins/*/.libs/*.so) exports exactly one symbol,
# sandbox_provider_v1; libpolysandbox.so exports only sbx_* symbols.
set -u

b=${top_builddir:?run through make check}
if ! command -v nm >/dev/null 2>&1; then
    echo "1..0 # SKIP nm (binutils) is not installed"
    exit 0
fi

n=0
failed=0
check() { # check OK DESCRIPTION [DIAGNOSTICS]
    n=$((n + 1))
    if [ "$1" = 0 ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        failed=1
        [ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/# /'
    fi
}

# Defined dynamic symbols, names only; AddressSanitizer's own ODR markers
# (__odr_asan.*) are instrumentation, not exports of ours.
exports() {
    nm -D --defined-only "$1" | awk 'NF >= 3 && $3 !~ /^__odr_asan/ { print $3 }' | sort -u
}

for so in "$b"/plugins/*/.libs/*.so; do
    [ -f "$so" ] || continue
    syms=$(exports "$so")
    [ "$syms" = "sandbox_provider_v1" ]
    check $? "$(basename "$so") exports exactly sandbox_provider_v1" \
        "exports: $(echo $syms)"
done

# The SDK macro under hidden visibility exports the descriptor alone, even
# without the linker's export list real providers also get.
so=$b/tests/loader/.libs/good.so
if [ -f "$so" ]; then
    syms=$(exports "$so")
    [ "$syms" = "sandbox_provider_v1" ]
    check $? "SBX_PROVIDER_DEFINE alone exports only sandbox_provider_v1 (good.so)" \
        "exports: $(echo $syms)"
fi

lib=$b/core/.libs/libpolysandbox.so
if [ -f "$lib" ]; then
    all=$(exports "$lib")
    bad=$(printf '%s\n' "$all" | grep -v '^sbx_' || true)
    [ -n "$all" ] && [ -z "$bad" ]
    check $? "libpolysandbox.so exports only sbx_* symbols" \
        "not sbx_: $(echo $bad)"
fi

if [ "$n" = 0 ]; then
    echo "1..0 # SKIP nothing built to check"
    exit 0
fi
echo "1..$n"
exit $failed
