/* commands.h — the commands of `simdec`, one function each (cli/cmd_*.c).
 * Each takes the arguments after "simdec" (argv[0] is the command name) and
 * returns the process exit status (see cli.h). */
#ifndef COMMANDS_H
#define COMMANDS_H

int cmd_gen(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_eval_generation(int argc, char **argv); /* cli/cmd_eval_gen.c */
int cmd_lp(int argc, char **argv);
int cmd_plot(int argc, char **argv);

#endif
