/*
 * cluster_mpi.c - the MPI job of `make check-cluster` (tests/cluster.sh,
 * docs/cluster.md): one rank per cluster host, Open MPI over UCX on uroce0.
 *
 * Usage: cluster_mpi WORDS ITERS SECONDS
 *   allreduce  MPI_Allreduce(MPI_SUM) of WORDS int64 words, ITERS times;
 *              word k of rank r is (r + 1) * (k + it): the sum must be
 *              (k + it) * N (N + 1) / 2 for every word of every iteration.
 *   alltoall   MPI_Alltoall of WORDS / N int64 words per peer, ITERS times;
 *              word k of the block r sends to d is r << 40 | d << 20 | k + it.
 *   ring       ITERS round trips of WORDS * 8 bytes between rank r and
 *              r + 1 (mod N), all pairs at once; every byte checked.
 *   soak       (SECONDS > 0) ring exchanges until SECONDS have passed on
 *              rank 0: a job to be disturbed (a daemon killed) while it runs.
 * Prints on rank 0 "allreduce ok", "alltoall ok", "ring ok BYTES" (bytes
 * one rank sent) and "ring MB/s X" (rank 0's send rate, for docs/cluster.md's
 * scaling table); any mismatch prints the first wrong word and aborts the job.
 */
#include <mpi.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static void bad(const char *what, long long at, long long got, long long want)
{
	fprintf(stderr, "rank %d: %s: word %lld is %lld, expected %lld\n", rank, what, at, got, want);
	MPI_Abort(MPI_COMM_WORLD, 2);
}

static void allreduce(long words, int iters)
{
	int64_t *in = malloc(words * sizeof(*in)), *out = malloc(words * sizeof(*out));
	int64_t tri = (int64_t)size * (size + 1) / 2;

	for (int it = 0; it < iters; it++) {
		for (long k = 0; k < words; k++)
			in[k] = (int64_t)(rank + 1) * (k + it);
		MPI_Allreduce(in, out, (int)words, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
		for (long k = 0; k < words; k++)
			if (out[k] != (k + it) * tri)
				bad("allreduce", k, out[k], (k + it) * tri);
	}
	free(in);
	free(out);
}

static int64_t a2a_word(int64_t src, int64_t dst, long k, int it)
{
	return src << 40 | dst << 20 | (k + it);
}

static void alltoall(long words, int iters)
{
	long per = words / size;
	int64_t *in = malloc(per * size * sizeof(*in)), *out = malloc(per * size * sizeof(*out));

	for (int it = 0; it < iters; it++) {
		for (int d = 0; d < size; d++)
			for (long k = 0; k < per; k++)
				in[d * per + k] = a2a_word(rank, d, k, it);
		MPI_Alltoall(in, (int)per, MPI_INT64_T, out, (int)per, MPI_INT64_T, MPI_COMM_WORLD);
		for (int s = 0; s < size; s++)
			for (long k = 0; k < per; k++)
				if (out[s * per + k] != a2a_word(s, rank, k, it))
					bad("alltoall", s * per + k, out[s * per + k], a2a_word(s, rank, k, it));
	}
	free(in);
	free(out);
}

/* one ring step: send to rank + 1, receive from rank - 1, check */
static void ring_step(unsigned char *tx, unsigned char *rx, long bytes, int it)
{
	int to = (rank + 1) % size, from = (rank + size - 1) % size;

	for (long b = 0; b < bytes; b++)
		tx[b] = (unsigned char)(rank * 131 + b * 7 + it);
	MPI_Sendrecv(tx, (int)bytes, MPI_BYTE, to, it & 0x7fff, rx, (int)bytes, MPI_BYTE, from,
		     it & 0x7fff, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (long b = 0; b < bytes; b++)
		if (rx[b] != (unsigned char)(from * 131 + b * 7 + it))
			bad("ring", b, rx[b], (unsigned char)(from * 131 + b * 7 + it));
}

int main(int argc, char **argv)
{
	long words;
	int iters;
	double seconds, t0, t1;
	unsigned char *tx, *rx;

	if (argc != 4) {
		fprintf(stderr, "usage: cluster_mpi WORDS ITERS SECONDS\n");
		return 2;
	}
	words = atol(argv[1]);
	iters = atoi(argv[2]);
	seconds = atof(argv[3]);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (words < size || iters < 1) {
		fprintf(stderr, "cluster_mpi: WORDS >= ranks and ITERS >= 1\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	allreduce(words, iters);
	if (rank == 0)
		printf("allreduce ok\n");
	alltoall(words, iters);
	if (rank == 0)
		printf("alltoall ok\n");
	tx = malloc(words * 8);
	rx = malloc(words * 8);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int it = 0; it < iters; it++)
		ring_step(tx, rx, words * 8, it);
	t1 = MPI_Wtime();
	if (rank == 0) {
		printf("ring ok %ld\n", words * 8 * iters);
		printf("ring MB/s %.1f\n", words * 8.0 * iters / (t1 - t0) / 1e6);
		fflush(stdout);
	}
	if (seconds > 0) {
		int go = 1;

		for (int it = 0; go; it++) {
			ring_step(tx, rx, words * 8, it);
			if (rank == 0)
				go = MPI_Wtime() - t1 < seconds;
			MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
		}
		if (rank == 0)
			printf("soak ok\n");
	}
	free(tx);
	free(rx);
	MPI_Finalize();
	return 0;
}
