/*
 * ucma_addr.c - which of a channel's devices an address or a route names
 * (ucma.h; docs/rdma-cm.md, "Provider"): the first command of an rdma_cm_id
 * that names an address decides its device this way.
 */
#include "config.h"

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ucma.h"

/* The IPv6 form of addr (IPv4 mapped), for comparison: 0, or -1 for other families. */
static int as_v6(const struct sockaddr *sa, struct in6_addr *out)
{
	if (sa->sa_family == AF_INET6) {
		*out = ((const struct sockaddr_in6 *)sa)->sin6_addr;
		return 0;
	}
	if (sa->sa_family == AF_INET) {
		memset(out, 0, sizeof(*out));
		out->s6_addr[10] = 0xff;
		out->s6_addr[11] = 0xff;
		memcpy(&out->s6_addr[12], &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return 0;
	}
	return -1;
}

int ucma_dev_by_addr(const struct ucma_dev *devs, int n, const struct sockaddr *addr)
{
	struct in6_addr a, d;

	if (as_v6(addr, &a))
		return -1;
	for (int i = 0; i < n; i++)
		if (!as_v6((const struct sockaddr *)&devs[i].addr, &d) && !memcmp(&a, &d, sizeof(a)))
			return i;
	return -1;
}

bool ucma_addr_is_any(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET)
		return ((const struct sockaddr_in *)addr)->sin_addr.s_addr == htonl(INADDR_ANY);
	if (addr->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)addr)->sin6_addr);
	return false;
}

bool ucma_addr_is_loopback(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)addr)->sin_addr.s_addr) >> 24) == 127;
	if (addr->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)addr)->sin6_addr);
	return false;
}

int ucma_dev_by_route(const struct ucma_dev *devs, int n, const struct sockaddr *dst)
{
	struct sockaddr_storage to, src;
	socklen_t len = sizeof(src);
	int s, dev = -1;

	if (dst->sa_family != AF_INET && dst->sa_family != AF_INET6)
		return 0;
	memset(&to, 0, sizeof(to));
	memcpy(&to, dst, dst->sa_family == AF_INET ? sizeof(struct sockaddr_in)
						   : sizeof(struct sockaddr_in6));
	/* Any port: connect(2) of a UDP socket only looks the route up. */
	if (to.ss_family == AF_INET && !((struct sockaddr_in *)&to)->sin_port)
		((struct sockaddr_in *)&to)->sin_port = htons(9);
	if (to.ss_family == AF_INET6 && !((struct sockaddr_in6 *)&to)->sin6_port)
		((struct sockaddr_in6 *)&to)->sin6_port = htons(9);
	s = socket(to.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return 0;
	if (!connect(s, (struct sockaddr *)&to, to.ss_family == AF_INET ? sizeof(struct sockaddr_in)
									 : sizeof(struct sockaddr_in6)) &&
	    !getsockname(s, (struct sockaddr *)&src, &len))
		dev = ucma_dev_by_addr(devs, n, (struct sockaddr *)&src);
	close(s);
	return dev >= 0 ? dev : 0;
}
