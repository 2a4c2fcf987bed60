/*
 * inspect_main.c - `uroce inspect FILE [--json] [--summary] [--flows] [--check [--mtu N]] [--port N]`: read a pcap or
 * (also [--graph OUT.svg] [--timeline] [--flow N], graph.h)
 * (also [--psn-graph OUT.svg] [--latency-svg OUT.svg], psn_output.h)
 * pcapng capture, decode every RoCEv1/RoCEv2 packet, verify its ICRC, print
 * one line (or JSON object) per RoCE packet and a summary.
 *
 * Exit status: 0 every RoCE packet well-formed with a good ICRC; 1 at least
 * one malformed packet or bad ICRC; 2 usage error, unreadable file,
 * unsupported link type, or a file that ends in the middle of a record.
 * With --check: 0 no finding, 1 at least one (check.h), 2 as above.
 * Documented in docs/inspect.md.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "decode.h"
#include "flows.h"
#include "follow.h"
#include "graph.h"
#include "print.h"
#include "psn_output.h"
#include "stats.h"

#define PROG "uroce inspect"
/* Arrows at most in one --graph picture: beyond, --flow picks a flow. */
#define GRAPH_MAX 20000u

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: " PROG " [--json] [--summary] [--flows] [--check [--mtu N]] [--port N]\n"
		"                     [--graph OUT.svg | --timeline] [--flow N] [--follow] FILE.pcap\n"
		"                     [--psn-graph OUT.svg] [--latency-svg OUT.svg]\n"
		"  Decode the RoCEv2 (UDP port N, default %u) and RoCEv1 (Ethertype 0x8915)\n"
		"  packets of a pcap or pcapng file and verify each ICRC.\n"
		"  --json      one JSON object per packet and one summary object\n"
		"  --summary   print only the summary (same exit status)\n"
		"  --flows     before the summary, PSN continuity and statistics per flow\n"
		"              (QP and direction): goodput, resends, NAKs, RNR waits, latency\n"
		"  --check     instead of the packets, every break of the IBTA transport\n"
		"              rules (PSN, opcode order, MTU, ACK/NAK, MSN, READ, atomics, ICRC)\n"
		"  --mtu N     with --check: the path MTU in force (256..4096; default: learned)\n"
		"  --port N    UDP destination port of RoCEv2 (1..65535)\n"
		"  --follow    FILE is still being written: read what is appended, as\n"
		"              tail -f, until SIGINT or SIGTERM (classic pcap only)\n"
		"  --graph OUT.svg  write the sequence graph (one lifeline per QP, one arrow\n"
		"              per packet; at most %u arrows) and print only the summary\n"
		"  --timeline  instead of the packets, per flow (QP pair) its packets in time\n"
		"              order with microseconds since the flow's first packet\n"
		"  --psn-graph OUT.svg  write the PSN-over-time graph of each RC/UC request\n"
		"              flow (requests, resends by cause, ACK line, NAKs, RNR waits, READ\n"
		"              responses, message ends; at most %u flows); with --json, the\n"
		"              figures behind it (one object per flow)\n"
		"  --latency-svg OUT.svg  write the histogram of message latencies (first\n"
		"              request packet to the completing response; log-scaled bins);\n"
		"              with --json, its bins\n"
		"  --flow N    with --graph/--timeline/--psn-graph/--latency-svg: only flow N\n"
		"              (the QP pair as --timeline numbers them)\n"
		"  exit status: 0 all good, 1 malformed packet or bad ICRC (--check: a finding),\n"
		"  2 usage/file error\n",
		ROCE_UDP_PORT, GRAPH_MAX, PSN_MAX_PANELS);
}

static int parse_port(const char *s, uint16_t *port)
{
	char *end;
	unsigned long v;

	/* digits only: strtoul would accept " 5" and "+5", and read
	 * "-18446744073709551615" as 1 */
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

/*
 * Opens capture file path for reading, pcap (µs or ns) or pcapng alike, with
 * timestamps in ns (pcap_open_offline_with_tstamp_precision(3PCAP)), and
 * checks its link type (*dlt). Returns the handle, or NULL after one line on
 * stderr (cannot open, unsupported link type).
 */
static pcap_t *open_capture(const char *path, int follow, int *dlt)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	FILE *fp = follow ? insp_follow_open(path) : NULL;
	pcap_t *pc;

	if (follow && !fp)
		return NULL;
	pc = fp ? pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, errbuf)
		: pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, errbuf);

	if (!pc) {
		/* libpcap names the file itself when fopen fails ("F: No such file
		 * or directory"); say it once. */
		const char *msg = errbuf;
		size_t plen = strlen(path);

		if (strncmp(msg, path, plen) == 0 && strncmp(msg + plen, ": ", 2) == 0)
			msg += plen + 2;
		fprintf(stderr, PROG ": %s: %s\n", path, msg);
		return NULL;
	}
	*dlt = pcap_datalink(pc);
	if (!link_supported(*dlt)) {
		const char *name = pcap_datalink_val_to_name(*dlt);

		fprintf(stderr, PROG ": %s: link type %d (%s) is not supported "
			"(Ethernet, raw IP, Linux cooked SLL/SLL2, BSD loopback are)\n",
			path, *dlt, name ? name : "unknown");
		pcap_close(pc);
		return NULL;
	}
	return pc;
}

/* The command line (see usage()). */
struct opts {
	int json, summary_only, flows, check, follow;
	int timeline;		/* --timeline */
	const char *graph;	/* --graph OUT.svg, or NULL */
	const char *psn_graph;	/* --psn-graph OUT.svg, or NULL */
	const char *lat_svg;	/* --latency-svg OUT.svg, or NULL */
	unsigned long flow;	/* --flow N, 1-based; 0 = all */
	uint16_t port;
	unsigned long mtu;	/* --mtu, bytes; 0 = learned */
	const char *path;
};

/* --mtu S: a path MTU of IBA (256, 512, 1024, 2048 or 4096 bytes); -1 otherwise. */
static int parse_mtu(const char *s, unsigned long *mtu)
{
	char *end;

	errno = 0;
	*mtu = *s >= '0' && *s <= '9' ? strtoul(s, &end, 10) : 0;
	if (errno || !*mtu || *end ||
	    (*mtu != 256 && *mtu != 512 && *mtu != 1024 && *mtu != 2048 && *mtu != 4096))
		return -1;
	return 0;
}

/* Fill *O from the command line; -1 to go on, or the exit status (after usage or an error line). */
static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "port", required_argument, NULL, 'p' },
		{ "summary", no_argument, NULL, 's' },
		{ "flows", no_argument, NULL, 'f' },
		{ "check", no_argument, NULL, 'c' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "follow", no_argument, NULL, 'W' },
		{ "graph", required_argument, NULL, 'g' },
		{ "timeline", no_argument, NULL, 't' },
		{ "flow", required_argument, NULL, 'F' },
		{ "psn-graph", required_argument, NULL, 'P' },
		{ "latency-svg", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->port = ROCE_UDP_PORT;
	while ((c = getopt_long(argc, argv, "jp:sfcm:g:tF:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->json = 1;
			break;
		case 'p':
			if (parse_port(optarg, &o->port) != 0) {
				fprintf(stderr, PROG ": bad --port '%s' (want 1..65535)\n", optarg);
				return 2;
			}
			break;
		case 's':
			o->summary_only = 1;
			break;
		case 'f':
			o->flows = 1;
			break;
		case 'c':
			o->check = 1;
			break;
		case 'm':
			if (parse_mtu(optarg, &o->mtu) != 0) {
				fprintf(stderr, PROG ": bad --mtu '%s' (want 256, 512, 1024, 2048 or 4096)\n",
					optarg);
				return 2;
			}
			break;
		case 'W':
			o->follow = 1;
			break;
		case 'g':
			o->graph = optarg;
			break;
		case 't':
			o->timeline = 1;
			break;
		case 'P':
			o->psn_graph = optarg;
			break;
		case 'L':
			o->lat_svg = optarg;
			break;
		case 'F': {
			char *end;

			errno = 0;
			o->flow = *optarg >= '1' && *optarg <= '9' ? strtoul(optarg, &end, 10) : 0;
			if (errno || !o->flow || *end || o->flow > UINT32_MAX) {
				fprintf(stderr, PROG ": bad --flow '%s' (want a flow number from 1)\n",
					optarg);
				return 2;
			}
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, PROG ": %s\n", optind >= argc ? "no capture file given" : "more than one file given");
		usage(stderr);
		return 2;
	}
	o->path = argv[optind];

	if (o->flow && !o->graph && !o->timeline && !o->psn_graph && !o->lat_svg) {
		fprintf(stderr, PROG ": --flow needs --graph or --timeline (or --psn-graph, --latency-svg)\n");
		return 2;
	}
	if (o->timeline && o->json) {
		fprintf(stderr, PROG ": --timeline has no JSON form; --json prints every packet\n");
		return 2;
	}
	if (o->mtu && !o->check) {
		fprintf(stderr, PROG ": --mtu needs --check\n");
		return 2;
	}
	return -1;
}

/*
 * The --timeline text and the --graph file of G (every packet read). Returns
 * 0, or -1 after a line on stderr (out of memory, cannot write the file).
 */
static int graph_output(struct insp_graph *g, const struct opts *o)
{
	uint64_t drawn, omitted = 0;
	FILE *fp;

	if (insp_graph_nomem(g)) {
		fprintf(stderr, PROG ": out of memory for the graph\n");
		return -1;
	}
	insp_graph_resolve(g);
	if (insp_graph_nomem(g)) {
		fprintf(stderr, PROG ": out of memory for the graph\n");
		return -1;
	}
	if (o->flow > insp_graph_flows(g)) {
		fprintf(stderr, PROG ": %s: no flow %lu (the capture has %" PRIu32 ")\n", o->path,
			o->flow, insp_graph_flows(g));
		return -1;
	}
	if (o->timeline)
		insp_graph_timeline(g, stdout, (uint32_t)o->flow);
	if (!o->graph)
		return 0;
	fp = fopen(o->graph, "w");
	if (!fp) {
		fprintf(stderr, PROG ": %s: %s\n", o->graph, strerror(errno));
		return -1;
	}
	drawn = insp_graph_svg(g, fp, o->path, (uint32_t)o->flow, GRAPH_MAX, &omitted);
	if (drawn == UINT64_MAX) {
		fclose(fp);
		fprintf(stderr, PROG ": out of memory for the graph\n");
		return -1;
	}
	if (ferror(fp) | fclose(fp)) {
		fprintf(stderr, PROG ": %s: cannot write: %s\n", o->graph, strerror(errno));
		return -1;
	}
	if (!o->json) {
		printf("graph: %s: %" PRIu64 " packets drawn", o->graph, drawn);
		if (omitted)
			printf(", %" PRIu64 " not", omitted);
		printf("\n");
	}
	if (omitted)
		fprintf(stderr, PROG ": %s: %" PRIu64 " packets not drawn (at most %u are); "
			"choose a flow with --flow\n", o->graph, omitted, GRAPH_MAX);
	return 0;
}

int main(int argc, char **argv)
{
	static struct insp_stats stats;
	static struct insp_rec rec;
	struct pcap_pkthdr *ph;
	const u_char *data;
	struct opts o;
	int dlt, rc, status;
	struct insp_check *checker = NULL;
	static struct insp_flows flow_table;
	struct insp_graph *graph = NULL;
	static struct psn_trace trace;
	int psn;
	pcap_t *pc;

	rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	psn = o.psn_graph || o.lat_svg;
	pc = open_capture(o.path, o.follow, &dlt);
	if (!pc)
		return 2;
	if (o.follow)
		setvbuf(stdout, NULL, _IOLBF, 0); /* each packet's line as it comes */
	if (o.check || o.flows || psn) {
		checker = insp_check_new((uint32_t)o.mtu);
		if (!checker) {
			fprintf(stderr, PROG ": out of memory\n");
			pcap_close(pc);
			return 2;
		}
	}

	if (o.graph || o.timeline || psn) {
		graph = insp_graph_new();
		if (!graph) {
			fprintf(stderr, PROG ": out of memory\n");
			insp_check_free(checker);
			pcap_close(pc);
			return 2;
		}
	}

	while ((rc = pcap_next_ex(pc, &ph, &data)) == 1) {
		insp_decode(dlt, data, ph->caplen, ph->len, o.port, &rec);
		rec.frame = stats.packets + 1;
		/* tv_usec holds nanoseconds (opened with NANO precision), as the
		 * file has them: a broken writer's 1e9 or more carries into the
		 * seconds, and libpcap may hand back a negative value. */
		rec.ts_sec = ph->ts.tv_sec + ph->ts.tv_usec / 1000000000;
		rec.ts_nsec = ph->ts.tv_usec % 1000000000;
		if (rec.ts_nsec < 0) {
			rec.ts_nsec += 1000000000;
			rec.ts_sec--;
		}
		insp_stats_add(&stats, &rec);
		if (o.flows)
			insp_flows_add(&flow_table, &rec);
		if (checker)
			insp_check_add(checker, &rec);
		if (psn)
			psn_trace_add(&trace, checker, &rec);
		if (graph)
			insp_graph_add(graph, &rec);
		if (rec.status == INSP_SKIPPED || o.summary_only || o.check || o.graph ||
		    o.timeline || psn)
			continue;
		if (o.json)
			insp_print_json(stdout, &rec);
		else
			insp_print_text(stdout, &rec);
	}
	status = insp_stats_failed(&stats) ? 1 : 0;
	if (o.check)
		status = insp_check_finish(checker, stdout, o.json) ? 1 : 0;
	if (rc == PCAP_ERROR) {
		/* e.g. "truncated dump file; tried to read 60 captured bytes, only got 12" */
		fprintf(stderr, PROG ": %s: after frame %llu: %s\n", o.path,
			(unsigned long long)stats.packets, pcap_geterr(pc));
		status = 2;
	}
	if (graph && graph_output(graph, &o) != 0)
		status = 2;
	else if (psn) {
		struct psn_opts po = { o.psn_graph, o.lat_svg, o.json, (uint32_t)o.flow, o.path };

		if (psn_output(&trace, checker, graph, &po) != 0)
			status = 2;
	}
	psn_trace_free(&trace);
	insp_graph_free(graph);
	if (o.flows && o.json)
		insp_flows_print_json(stdout, &flow_table, checker);
	else if (o.flows)
		insp_flows_print_text(stdout, &flow_table, checker);
	insp_flows_free(&flow_table);
	insp_check_free(checker);
	if (o.json)
		insp_stats_print_json(stdout, &stats);
	else
		insp_stats_print_text(stdout, &stats);
	pcap_close(pc);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, PROG ": cannot write output: %s\n", strerror(errno));
		return 2;
	}
	return status;
}
