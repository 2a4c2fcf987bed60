/*
 * uroce-gid: the identity `uroce up` writes into a device's sysfs tree,
 * derived from the address the device's daemon binds.
 *
 *   uroce gid ADDR [PORT]
 *
 * prints three lines (the sysfs file formats of docs/discovery.md):
 *   gid 0000:0000:0000:0000:0000:ffff:7f00:0001   GID 0: IPv4-mapped for IPv4
 *                                                 (RoCEv2, IBTA A17.4.5.1),
 *                                                 the address itself for IPv6
 *   node_guid 0200:7fff:fe00:0001                 uroce_node_guid() of
 *                                                 include/uroce/abi.h (the
 *                                                 EUI-64 of MAC 02:00:a:b:c:d,
 *                                                 a.b.c.d the address's last
 *                                                 4 bytes), as the daemon
 *                                                 reports it in query_device
 *   netdev lo                                     the interface owning ADDR
 *
 * PORT is checked (1..65535) but does not change the identity.
 * Errors (exit 1, one line on stderr): ADDR is not an IPv4/IPv6 address, is
 * unspecified, multicast or IPv4-mapped IPv6, or no local interface has it;
 * PORT not 1..65535.  Exit 2: usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uroce/abi.h"

/* The 16-byte GID of ADDR; returns AF_INET/AF_INET6, or -1 if not an address. */
static int addr_to_gid(const char *addr, uint8_t gid[16], struct in_addr *v4, struct in6_addr *v6)
{
	if (inet_pton(AF_INET, addr, v4) == 1) {
		memset(gid, 0, 10);
		gid[10] = 0xff;
		gid[11] = 0xff;
		memcpy(gid + 12, &v4->s_addr, 4);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, addr, v6) == 1) {
		memcpy(gid, v6->s6_addr, 16);
		return AF_INET6;
	}
	return -1;
}

/* Name of the interface holding the address, or NULL (errno set). */
static const char *owner_netdev(int family, const struct in_addr *v4, const struct in6_addr *v6,
				char name[IF_NAMESIZE])
{
	struct ifaddrs *ifa_list, *ifa;
	const char *found = NULL;

	if (getifaddrs(&ifa_list) != 0)
		return NULL;
	for (ifa = ifa_list; ifa && !found; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != family)
			continue;
		if (family == AF_INET) {
			const struct sockaddr_in *sin = (const void *)ifa->ifa_addr;
			const struct sockaddr_in *mask = (const void *)ifa->ifa_netmask;

			/* Linux's loopback answers for its whole prefix (127.0.0.0/8),
			 * so 127.0.0.2 is as local as 127.0.0.1: a second device. */
			if (sin->sin_addr.s_addr != v4->s_addr &&
			    !((ifa->ifa_flags & IFF_LOOPBACK) && mask &&
			      ((sin->sin_addr.s_addr ^ v4->s_addr) & mask->sin_addr.s_addr) == 0))
				continue;
		} else {
			const struct sockaddr_in6 *sin6 = (const void *)ifa->ifa_addr;

			if (memcmp(&sin6->sin6_addr, v6, sizeof(*v6)) != 0)
				continue;
		}
		snprintf(name, IF_NAMESIZE, "%s", ifa->ifa_name);
		found = name;
	}
	freeifaddrs(ifa_list);
	if (!found)
		errno = EADDRNOTAVAIL;
	return found;
}

int main(int argc, char **argv)
{
	uint8_t gid[16];
	uint64_t guid;
	struct in_addr v4;
	struct in6_addr v6;
	char ifname[IF_NAMESIZE];
	unsigned long port = 4791;
	int family;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: uroce gid ADDR [PORT]\n");
		return 2;
	}
	if (argc == 3) {
		char *end;

		errno = 0;
		port = strtoul(argv[2], &end, 10);
		if (errno || end == argv[2] || *end || port < 1 || port > 65535) {
			fprintf(stderr, "uroce: port '%s' is not a number in 1..65535\n", argv[2]);
			return 1;
		}
	}
	family = addr_to_gid(argv[1], gid, &v4, &v6);
	if (family < 0) {
		fprintf(stderr, "uroce: '%s' is not an IPv4 or IPv6 address\n", argv[1]);
		return 1;
	}
	if ((family == AF_INET && (v4.s_addr == htonl(INADDR_ANY) || IN_MULTICAST(ntohl(v4.s_addr)))) ||
	    (family == AF_INET6 && (IN6_IS_ADDR_UNSPECIFIED(&v6) || IN6_IS_ADDR_MULTICAST(&v6)))) {
		fprintf(stderr, "uroce: address %s is unspecified or multicast; a device needs one unicast address\n",
			argv[1]);
		return 1;
	}
	if (family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&v6)) {
		fprintf(stderr, "uroce: address %s is IPv4-mapped; give it in IPv4 form\n", argv[1]);
		return 1;
	}
	if (!owner_netdev(family, &v4, &v6, ifname)) {
		fprintf(stderr, "uroce: address %s is not configured on any local interface (%s)\n", argv[1],
			strerror(errno));
		return 1;
	}
	/* gid[12..15] is the IPv4 address, or the IPv6 address's last 4 bytes. */
	guid = uroce_node_guid(gid + 12);

	printf("gid ");
	for (int i = 0; i < 16; i += 2)
		printf("%02x%02x%s", gid[i], gid[i + 1], i < 14 ? ":" : "\n");
	printf("node_guid %04x:%04x:%04x:%04x\n", (unsigned)(guid >> 48) & 0xffff, (unsigned)(guid >> 32) & 0xffff,
	       (unsigned)(guid >> 16) & 0xffff, (unsigned)guid & 0xffff);
	printf("netdev %s\n", ifname);
	return 0;
}
