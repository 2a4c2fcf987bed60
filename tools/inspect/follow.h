/*
 * follow.h - `uroce inspect --follow FILE`: read a pcap file that is still
 * being written (a running `uroce capture`), as tail -f does, until SIGINT or
 * SIGTERM (docs/inspect.md, "Live capture").
 */
#ifndef UROCE_TOOLS_INSPECT_FOLLOW_H
#define UROCE_TOOLS_INSPECT_FOLLOW_H

#include <stdio.h>

/*
 * insp_follow_open - start following PATH (classic pcap, either byte order,
 * µs or ns timestamps; not pcapng). A thread reads what the writer appends,
 * every 100 ms, and passes on only whole records into the pipe whose read
 * end is returned, for pcap_fopen_offline(3PCAP). SIGINT and SIGTERM are
 * blocked in the calling thread (call this before starting other threads);
 * the first of them ends the stream (end of file on the returned stream),
 * after the whole records read so far.
 * Returns the stream, or NULL after one line on stderr: the file cannot be
 * opened, its header does not arrive within 10 s, or it is not classic pcap.
 */
FILE *insp_follow_open(const char *path);

#endif
