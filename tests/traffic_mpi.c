/*
 * traffic_mpi.c - an MPI program for two ranks (built with mpicc and run
 * with mpirun by traffic_mpi.sh, through `uroce run`, over Open MPI's UCX
 * PML and one-sided component).
 *
 * Usage: traffic_mpi SIZE ITERS EPOCHS
 *
 * 1. Ping-pong: ITERS round trips of SIZE-byte messages (MPI_Send /
 *    MPI_Recv, tag = iteration). Every byte depends on the iteration and
 *    the sender, and the receiver checks each one.
 * 2. One-sided: each rank exposes a window of 2 * NWORDS int64_t (MPI_Win_create).
 *    In each of EPOCHS fence epochs, each rank MPI_Puts NWORDS words into the
 *    first half of the other rank's window and MPI_Accumulates (MPI_SUM)
 *    NWORDS words into the second half of both windows. The first half must
 *    then hold exactly the last epoch's Put values and the second half the
 *    sum of both ranks' contributions over all epochs (MPI-3.1 §11.3-§11.5).
 *
 * Rank 0 prints "pingpong ok BYTES" (bytes moved both ways) and
 * "rma ok EPOCHS" when the checks pass; any mismatch is printed with its
 * position and the run aborts with exit status 1.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NWORDS 1024

static unsigned char pattern(int rank, long iter, long i)
{
	return (unsigned char)(i * 7 + iter * 13 + rank * 101);
}

static void die(const char *what, long a, long b, long want, long got)
{
	fprintf(stderr, "traffic_mpi: %s: at %ld/%ld expected %ld got %ld\n", what, a, b, want, got);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static void fill(unsigned char *buf, long size, int rank, long iter)
{
	for (long i = 0; i < size; i++)
		buf[i] = pattern(rank, iter, i);
}

static void check(const unsigned char *buf, long size, int rank, long iter)
{
	for (long i = 0; i < size; i++)
		if (buf[i] != pattern(rank, iter, i))
			die("ping-pong byte", iter, i, pattern(rank, iter, i), buf[i]);
}

static void pingpong(int rank, long size, long iters)
{
	unsigned char *sbuf = malloc(size), *rbuf = malloc(size);
	int peer = 1 - rank;

	if (!sbuf || !rbuf)
		die("malloc", 0, 0, size, 0);
	for (long it = 0; it < iters; it++) {
		int tag = (int)(it % 32768);
		MPI_Status st;
		int count;

		fill(sbuf, size, rank, it);
		if (rank == 0) {
			MPI_Send(sbuf, (int)size, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
			MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
		} else {
			MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
			MPI_Send(sbuf, (int)size, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
		}
		MPI_Get_count(&st, MPI_BYTE, &count);
		if (count != size)
			die("ping-pong count", it, 0, size, count);
		check(rbuf, size, peer, it);
	}
	free(sbuf);
	free(rbuf);
	if (rank == 0)
		printf("pingpong ok %ld\n", size * iters * 2);
}

static int64_t put_val(int rank, long epoch, long i)
{
	return ((int64_t)rank << 40) + epoch * 100000 + i;
}

static int64_t acc_val(int rank, long epoch, long i)
{
	return (int64_t)(rank + 1) * (epoch + 1) * (i + 1);
}

static void rma(int rank, long epochs)
{
	int64_t *base, src_put[NWORDS], src_acc[NWORDS];
	int peer = 1 - rank;
	MPI_Win win;

	MPI_Alloc_mem(2 * NWORDS * sizeof(int64_t), MPI_INFO_NULL, &base);
	for (long i = 0; i < 2 * NWORDS; i++)
		base[i] = 0;
	MPI_Win_create(base, 2 * NWORDS * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
		       MPI_COMM_WORLD, &win);
	MPI_Win_fence(0, win);
	for (long e = 0; e < epochs; e++) {
		for (long i = 0; i < NWORDS; i++) {
			src_put[i] = put_val(rank, e, i);
			src_acc[i] = acc_val(rank, e, i);
		}
		MPI_Put(src_put, NWORDS, MPI_INT64_T, peer, 0, NWORDS, MPI_INT64_T, win);
		MPI_Accumulate(src_acc, NWORDS, MPI_INT64_T, peer, NWORDS, NWORDS, MPI_INT64_T,
			       MPI_SUM, win);
		MPI_Accumulate(src_acc, NWORDS, MPI_INT64_T, rank, NWORDS, NWORDS, MPI_INT64_T,
			       MPI_SUM, win);
		MPI_Win_fence(0, win);
	}
	for (long i = 0; i < NWORDS; i++) {
		int64_t want = put_val(peer, epochs - 1, i), sum = 0;

		if (base[i] != want)
			die("MPI_Put word", epochs, i, (long)want, (long)base[i]);
		for (long e = 0; e < epochs; e++)
			sum += acc_val(0, e, i) + acc_val(1, e, i);
		if (base[NWORDS + i] != sum)
			die("MPI_Accumulate word", epochs, i, (long)sum, (long)base[NWORDS + i]);
	}
	MPI_Win_free(&win);
	MPI_Free_mem(base);
	if (rank == 0)
		printf("rma ok %ld\n", epochs);
}

int main(int argc, char **argv)
{
	int rank, nranks;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (argc != 4 || nranks != 2) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -np 2 traffic_mpi SIZE ITERS EPOCHS\n");
		MPI_Finalize();
		return 2;
	}
	pingpong(rank, atol(argv[1]), atol(argv[2]));
	rma(rank, atol(argv[3]));
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
