/* eval_policy.h — `simdec eval speedup --draft-policy RULE` (eval_policy.c). */
#ifndef CLI_EVAL_POLICY_H
#define CLI_EVAL_POLICY_H

/* argv[0] is "speedup". */
int cmd_eval_policy(int argc, char **argv);

#endif
