/* symbol_is_function.c — a shared object whose simdec_plugin is a
 * function, not the data SD_PLUGIN defines (tests/test_plugin.c expects
 * SD_EDATA, without reading the function's code as an sd_plugin). */
int simdec_plugin(void);

int simdec_plugin(void)
{
    return 1;
}
