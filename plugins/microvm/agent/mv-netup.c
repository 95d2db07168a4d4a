/* plugins/microvm/agent/mv-netup.c - the guest's network interfaces
 *
 * A VM without network has a loopback alone (up, as a sandbox's
 * loopback is on the other providers); one whose template allows
 * egress has QEMU's user-mode network on eth0, whose addresses are
 * slirp's fixed ones: no DHCP client, and no busybox, in the agent,
 * only ioctls.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/route.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mv-netup.h"

#define NET_ADDR "10.0.2.15"
#define NET_MASK "255.255.255.0"
#define NET_GW "10.0.2.2"
#define NET_RESOLV "nameserver 10.0.2.3\n"

static void set_in(struct sockaddr *sa, const char *ip)
{
    struct sockaddr_in in;

    memset(&in, 0, sizeof in);
    in.sin_family = AF_INET;
    (void)inet_pton(AF_INET, ip, &in.sin_addr);
    memcpy(sa, &in, sizeof in);
}

static int if_req(int fd, unsigned long req, const char *ifn, const char *ip)
{
    struct ifreq r;

    memset(&r, 0, sizeof r);
    snprintf(r.ifr_name, sizeof r.ifr_name, "%s", ifn);
    set_in(&r.ifr_addr, ip);
    return ioctl(fd, req, &r);
}

static int if_up(int fd, const char *ifn)
{
    struct ifreq r;

    memset(&r, 0, sizeof r);
    snprintf(r.ifr_name, sizeof r.ifr_name, "%s", ifn);
    if (ioctl(fd, SIOCGIFFLAGS, &r) != 0)
        return -1;
    r.ifr_flags |= IFF_UP | IFF_RUNNING;
    return ioctl(fd, SIOCSIFFLAGS, &r);
}

/* eth0 is there once virtio_net has probed the device: at once, as a
 * rule; a second at most. */
static int wait_eth0(int fd)
{
    struct ifreq r;

    for (int i = 0; i < 100; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        memset(&r, 0, sizeof r);
        snprintf(r.ifr_name, sizeof r.ifr_name, "eth0");
        if (ioctl(fd, SIOCGIFINDEX, &r) == 0)
            return 0;
        nanosleep(&ts, NULL);
    }
    return -1;
}

/* Replaced, never written through: a link an image left there is not
 * followed out of its root. */
static int put_resolv(const char *path)
{
    size_t len = strlen(NET_RESOLV);
    int fd, rc;

    if (unlink(path) != 0 && errno != ENOENT)
        return -1;
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    rc = write(fd, NET_RESOLV, len) == (ssize_t)len ? 0 : -1;
    if (close(fd) != 0)
        rc = -1;
    return rc;
}

static int default_route(int fd)
{
    struct rtentry rt;
    char dev[] = "eth0";

    memset(&rt, 0, sizeof rt);
    set_in(&rt.rt_dst, "0.0.0.0");
    set_in(&rt.rt_genmask, "0.0.0.0");
    set_in(&rt.rt_gateway, NET_GW);
    rt.rt_flags = RTF_UP | RTF_GATEWAY;
    rt.rt_dev = dev;
    return ioctl(fd, SIOCADDRT, &rt);
}

int mv_netup(int eth, const char *img_root, const char **what)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int rc = -1, saved;
    char path[256];

    if (fd < 0) {
        *what = "socket";
        return -1;
    }
    if ((*what = "bringing lo up", if_up(fd, "lo")))
        goto out;
    if (!eth) {
        rc = 0;
        goto out;
    }
    if ((*what = "no eth0 (virtio_net)", wait_eth0(fd)) ||
        (*what = "eth0's address", if_req(fd, SIOCSIFADDR, "eth0", NET_ADDR)) ||
        (*what = "eth0's netmask", if_req(fd, SIOCSIFNETMASK, "eth0", NET_MASK)) ||
        (*what = "bringing eth0 up", if_up(fd, "eth0")) ||
        (*what = "the default route", default_route(fd)) ||
        (*what = "/etc/resolv.conf", put_resolv("/etc/resolv.conf")))
        goto out;
    if (img_root) {
        *what = "the image's /etc/resolv.conf";
        if ((size_t)snprintf(path, sizeof path, "%s/etc", img_root) >= sizeof path) {
            errno = ENAMETOOLONG;
            goto out;
        }
        if ((mkdir(path, 0755) != 0 && errno != EEXIST))
            goto out;
        snprintf(path, sizeof path, "%s/etc/resolv.conf", img_root);
        if (put_resolv(path) != 0)
            goto out;
    }
    rc = 0;
out:
    saved = errno;
    close(fd);
    errno = saved;
    return rc;
}
