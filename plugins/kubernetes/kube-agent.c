/* plugins/kubernetes/kube-agent.c - agent-sandbox mode (SandboxClaims on warm pools) */
#include "config.h"

#include "kube-int.h"

int kube_agent_create(struct kube_prov *p, const sbx_create_spec_v1 *spec, struct kube_sb **out)
{
    (void)spec;
    *out = NULL;
    return p->host->set_error(p->h, SBX_E_NOTSUP, "mode = agent-sandbox is not available yet");
}

int kube_agent_destroy(struct kube_prov *p, struct kube_sb *sb)
{
    return kube_pod_delete(p, sb->pod);
}

int kube_agent_attach(struct kube_prov *p, const char *name, struct kube_sb **out)
{
    return kube_pod_attach(p, name, out);
}

int kube_agent_list(struct kube_prov *p, const sbx_kv_v1 *filter, size_t n_filter,
                    sbx_list_cb_v1 cb, void *ud)
{
    return kube_pod_list(p, filter, n_filter, cb, ud);
}

void kube_agent_free(struct kube_prov *p)
{
    for (size_t i = 0; i < p->n_agent_ready; i++)
        free(p->agent_ready[i]);
    free(p->agent_ready);
}
