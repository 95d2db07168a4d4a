/* plugins/microvm/mv-net.c - a VM's network: none, or QEMU's user-mode
 *
 * A VM has no network device unless its template allows egress
 * (`network = egress`, sbx_create_spec_v1.egress).  Then QEMU gives it
 * one virtio-net device on its user-mode stack (slirp: no tap, no
 * bridge, nothing of the host's network configured), and the agent
 * brings eth0 up with slirp's fixed addresses (agent/mv-netup.c).
 *
 * QEMU 7.2's slirp connects a guest's packets for 10.0.2.2 (or for
 * 127.0.0.1 itself) to the host's loopback, and no -netdev user option
 * turns that off (libslirp's disable_host_loopback is not QEMU's).  So
 * egress is refused unless the provider's egress_loopback = true says
 * that reaching the host's loopback services is wanted (tests, a host
 * with nothing private there), as the local provider's setting of that
 * name does; refused, never given without saying so.
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>

#include "mv-int.h"

int mv_net_egress(struct mv_prov *p, const sbx_create_spec_v1 *spec, int *net)
{
    *net = spec->struct_size >= offsetof(sbx_create_spec_v1, egress) + sizeof spec->egress &&
           spec->egress;
    if (!*net)
        return SBX_OK;
    if (p->vmm != &mv_vmm_qemu)
        return p->host->set_error(p->h, SBX_E_NOTSUP,
                                  "microvm: network = egress: vmm = %s gives a VM no network "
                                  "device (vmm = qemu's user-mode network does): refused rather "
                                  "than run without network",
                                  p->vmm->name);
    if (!p->egress_loopback)
        return p->host->set_error(p->h, SBX_E_NOTSUP,
                                  "microvm: network = egress needs egress_loopback = true in "
                                  "providers.d/microvm.ini: QEMU's user-mode network reaches "
                                  "the host's loopback (10.0.2.2 in the guest) and cannot be "
                                  "told not to; refused rather than open the host's private "
                                  "services to the guest unasked");
    return SBX_OK;
}

void mv_net_describe(const struct mv_prov *p, char *buf, size_t n)
{
    if (p->vmm != &mv_vmm_qemu)
        snprintf(buf, n,
                 "none: vmm = %s VMs have no network device (network = egress is "
                 "refused)",
                 p->vmm->name);
    else if (p->egress_loopback)
        snprintf(buf, n,
                 "network = egress: QEMU's user-mode network (10.0.2.15, gateway "
                 "10.0.2.2, DNS 10.0.2.3), the host's loopback reachable as 10.0.2.2 "
                 "(egress_loopback = true); such VMs boot cold; else no network device");
    else
        snprintf(buf, n,
                 "none: no network device; network = egress is refused unless "
                 "egress_loopback = true (QEMU's user-mode network reaches the host's loopback)");
}
