# tests/python/no-asan.sh - sourced by the tests that install the package
# and run it outside the build tree (install.sh, pip-install.sh): under an
# AddressSanitizer build python3 would need the sanitizer runtimes
# preloaded, which run-python.sh does for the build tree alone, so they
# skip (binding.sh covers the package there).
case "${SBX_CFLAGS:-} ${SBX_LDFLAGS:-}" in
*sanitize=address*)
    echo "1..0 # SKIP an ASan build (tests/python/binding.sh covers the package)"
    exit 0 ;;
esac
