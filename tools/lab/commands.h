// SPDX-License-Identifier: MIT
/*
 * commands.h -- the lab's subcommands, one entry point each. main.c maps
 * the command line onto them; every entry point gets argv[0] = its own name
 * as the user typed it ("memcheck", "bench random", ...), which opts.c puts
 * in front of every message.
 *
 * Conventions every command keeps: --help prints the usage on stdout and
 * exits 0; misuse prints what was wrong and the usage on stderr and exits 2;
 * a measurement that ran exits 0 even when a target FAILs (the report says
 * so), and 1 when the method itself failed (a crash, a leak, a heap check).
 */
#ifndef RTM_LAB_COMMANDS_H
#define RTM_LAB_COMMANDS_H

int memcheck_main(int argc, char **argv); /* memcheck.c        */
int random_main(int argc, char **argv);   /* random.c          */
int threads_main(int argc, char **argv);  /* threads.c         */
int limits_main(int argc, char **argv);   /* limits.c          */
int wcet_main(int argc, char **argv);     /* wcet_bridge.c     */
int latency_main(int argc, char **argv);  /* latency.c         */
int record_main(int argc, char **argv);   /* record.c          */
int trace_main(int argc, char **argv);    /* trace.c           */
int replay_main(int argc, char **argv);   /* replay.c          */
int fit_main(int argc, char **argv);      /* fit.c             */
int zram_main(int argc, char **argv);     /* zram.c            */

#endif /* RTM_LAB_COMMANDS_H */
