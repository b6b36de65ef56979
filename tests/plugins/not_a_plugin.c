/* not_a_plugin.c — a shared object that loads but is not a simdec plugin:
 * no symbol simdec_plugin (tests/test_plugin.c expects SD_EDATA saying
 * so). */
int simdec_test_not_a_plugin(int x);

int simdec_test_not_a_plugin(int x)
{
    return x + 1;
}
