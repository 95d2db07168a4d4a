/* plugins/microvm/agent/mv-netup.h - the guest's network interfaces */
#ifndef POLYSANDBOX_MV_NETUP_H
#define POLYSANDBOX_MV_NETUP_H

/* Brings the loopback up; with @eth (sbx.net=user: QEMU's user-mode
 * network, its virtio-net driver loaded) also eth0 at slirp's fixed
 * addresses (10.0.2.15/24, default route via 10.0.2.2) and its DNS
 * (10.0.2.3) into /etc/resolv.conf and, when @img_root is not NULL,
 * into @img_root/etc/resolv.conf (the commands' root).  0, or -1 with
 * errno set and *what naming the step that failed. */
int mv_netup(int eth, const char *img_root, const char **what);

#endif
