/* core/eval/eval-judge-proto.h - what the judged tests' runner (the static
 * program core/eval/eval-judge-runner.c, run inside the sandbox) and the core
 * (core/eval/eval-judge-batch.c) say to each other.  Shared by both, so it
 * includes nothing.
 *
 * The Python runner (core/eval/eval-judge-driver.py) speaks the same.
 *
 * The runner's stdin, from the core:
 *   "SBXJ1 MARKER N LIMIT_NS OUT_CAP ERR_CAP FAIL_FAST\n"
 *   then N times "LEN\n" and LEN bytes: each test's input.
 * The runner's stdout, read by the core (and nothing else writes it: the
 * tests' programs get pipes of their own):
 *   "\n" PREFIX "judge " MARKER "\n"
 *   per test, its stdout in chunks "D LEN\n" + LEN bytes (at most
 *   OUT_CAP + 1 bytes in all), then "T I CLEAN WALL_NS CPU_NS\n";
 *   at the end PREFIX "judge-end " MARKER " COUNT\n".
 * CLEAN is 1 when the test's program exited 0 within LIMIT_NS with at
 * most OUT_CAP bytes on stdout and ERR_CAP on stderr, else 0: only a
 * clean test's output is compared; the core runs every other test again
 * on an exec of its own, whose result decides, as without the runner.
 */
#ifndef CORE_EVAL_JUDGE_PROTO_H
#define CORE_EVAL_JUDGE_PROTO_H

#define CORE_EVAL_MARKER_PREFIX "__polysandbox_eval_done__ "
#define CORE_JR_MAGIC "SBXJ1"
#define CORE_JR_START "judge "
#define CORE_JR_END "judge-end "
#define CORE_JR_FILE ".polysandbox-judge"     /* the runner, in the work directory */
#define CORE_JD_FILE ".polysandbox-judge.py"  /* the Python runner, there too */
#define CORE_JR_MAX_TESTS 100000
#define CORE_JR_CHUNK 65536                  /* the largest "D" chunk */

#endif
