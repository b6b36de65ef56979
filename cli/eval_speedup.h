/* eval_speedup.h — `simdec eval speedup` (eval_speedup.c). */
#ifndef CLI_EVAL_SPEEDUP_H
#define CLI_EVAL_SPEEDUP_H

/* argv[0] is "speedup". */
int cmd_eval_speedup(int argc, char **argv);

#endif
