# tests/python/sanitizer-env.sh - sourced before running python3 on the
# build tree's libpolysandbox: under an AddressSanitizer build the
# library needs the sanitizer runtimes loaded before anything else in
# python3, so they are preloaded (the compiler tells where they are) and
# leak checking is off (the interpreter keeps memory to its exit by
# design).  Sets and exports LD_PRELOAD and ASAN_OPTIONS (and, for a
# polysandboxd started from Python, SERVER_ASAN_OPTIONS and
# SERVER_LD_PRELOAD), or py_skip to why python3 cannot load the library.
py_skip=
case "${SBX_CFLAGS:-} ${SBX_LDFLAGS:-}" in
*sanitize=address*)
    pre=
    for rt in libasan.so libubsan.so; do
        case "${SBX_CFLAGS:-} ${SBX_LDFLAGS:-}" in
        *sanitize=*undefined*) ;;
        *) [ "$rt" = libubsan.so ] && continue ;;
        esac
        f=$(${SBX_CC:-cc} -print-file-name=$rt 2>/dev/null)
        f=$(readlink -f "$f" 2>/dev/null)
        if [ -z "$f" ] || [ ! -f "$f" ]; then
            py_skip="an ASan build, and ${SBX_CC:-cc} does not say where $rt is"
            break
        fi
        pre="$pre${pre:+ }$f"
    done
    if [ -z "$py_skip" ]; then
        # polysandboxd is instrumented itself: a test's Python starts it
        # with these (leak checking on, as in the other server tests).
        SERVER_ASAN_OPTIONS=${ASAN_OPTIONS-}
        SERVER_LD_PRELOAD=${LD_PRELOAD-}
        export SERVER_ASAN_OPTIONS SERVER_LD_PRELOAD
        LD_PRELOAD="$pre${LD_PRELOAD:+ $LD_PRELOAD}"
        # Last, so it wins over a caller's detect_leaks=1 (CI sets one).
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
        export LD_PRELOAD ASAN_OPTIONS
    fi
    ;;
esac
