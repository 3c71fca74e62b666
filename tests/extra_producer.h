/* extra_producer.h - one producer entry and nothing else, for the build that
 * test_producer_entry runs in (-DOPPROF_TEST_PRODUCER=ON, .ci/run): the
 * compiler includes it before every file, and the one list is all that a new
 * producer needs to be named by report, diff and check. */
#define OPPROF_EXTRA_PRODUCERS(X) X(TEST_RUNTIME, 7, "a test runtime", "Test runtime")
