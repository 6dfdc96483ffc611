// SPDX-License-Identifier: MIT
/*
 * record_files.h -- the files of one `rtmem record` run (the recorder,
 * tools/record/record_process.c, writes them; docs/TRACE.md): FILE for the
 * launched process, FILE.<pid>.<program> for each child, FILE.index with
 * one line per event. Before a run, what an earlier run left under the same
 * name goes; after it, the index becomes the closing summary.
 */
#ifndef RTM_LAB_RECORD_FILES_H
#define RTM_LAB_RECORD_FILES_H

#include <stddef.h>
#include <sys/types.h>

/* Removes FILE, FILE.index and every earlier child trace of FILE (a file
 * named FILE.<digits> or FILE.<digits>.<anything> that is an rtmem trace;
 * other files stay). Returns 0,
 * or -1 with errno and the failing path in bad (n bytes). */
int record_files_clear(const char *file, char *bad, size_t n);

/* Prints the closing lines to stderr: the calls in FILE and which programs
 * they are of, the children's traces (this run's, from the index), and
 * why a program ran unrecorded (an environment without the recorder, a
 * static executable). pid is the launched process; final_only as given. */
void record_files_report(const char *file, pid_t pid, int final_only);

#endif /* RTM_LAB_RECORD_FILES_H */
