/*
 * core/network_profile.c - how a network states its optimization
 * profiles: for each input with runtime dimensions, the min, opt and max
 * dimensions (for a shape-tensor input, values) of every profile, checked
 * as they are given.  What a build makes of them is core/profile.c's.
 */
#include <config.h>

#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mica__range_free(mica__range_t *r)
{
    free(r->origin);
    free(r->vmin);
    free(r->vopt);
    free(r->vmax);
}

mica_status_t mica_network_add_profile(mica_network_t *net, int32_t *index)
{
    mica__profile_t *grown = realloc(net->profiles, sizeof *grown *
                                     (size_t)(net->nb_profiles + 1));
    if (!grown)
        return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
    net->profiles = grown;
    memset(&grown[net->nb_profiles], 0, sizeof *grown);
    if (index)
        *index = net->nb_profiles;
    net->nb_profiles++;
    return MICA_OK;
}

int32_t mica_network_nb_profiles(const mica_network_t *net)
{
    return net->nb_profiles;
}

/* The unset range of `input` in `profile` (*out), and the input's index. */
static mica_status_t range_of(mica_network_t *net, int32_t profile,
                              const char *input, const char *origin,
                              mica__range_t **out, int32_t *which)
{
    mica__profile_t *p;
    char at[512];
    int32_t i;

    if (profile < 0 || profile >= net->nb_profiles)
        return mica__fail(net->ctx, MICA_ERR_INVALID,
                          "%sprofile %d does not exist (the network has %d)",
                          mica__at(origin, at, sizeof at), (int)profile,
                          (int)net->nb_profiles);
    for (i = 0; i < net->nb_inputs; i++)
        if (strcmp(net->inputs[i].name, input) == 0)
            break;
    if (i == net->nb_inputs)
        return mica__fail(net->ctx, MICA_ERR_NOT_FOUND,
                          "%sprofile %d: '%s' is not a network input",
                          mica__at(origin, at, sizeof at), (int)profile,
                          input);
    p = &net->profiles[profile];
    if (p->nb_ranges < net->nb_inputs) {
        mica__range_t *grown = realloc(p->ranges, sizeof *grown *
                                       (size_t)net->nb_inputs);
        if (!grown)
            return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
        memset(grown + p->nb_ranges, 0,
               sizeof *grown * (size_t)(net->nb_inputs - p->nb_ranges));
        p->ranges = grown;
        p->nb_ranges = net->nb_inputs;
    }
    if (p->ranges[i].set)
        return mica__fail(net->ctx, MICA_ERR_INVALID,
                          "%sprofile %d gives input '%s' twice",
                          mica__at(origin, at, sizeof at), (int)profile,
                          input);
    *which = i;
    *out = &p->ranges[i];
    return MICA_OK;
}

mica_status_t mica_network_set_profile_dims(mica_network_t *net,
                                            int32_t profile, const char *input,
                                            const mica_dims_t *min,
                                            const mica_dims_t *opt,
                                            const mica_dims_t *max,
                                            const char *origin)
{
    int32_t i, k;
    mica__range_t *r;
    const mica__net_input_t *in;
    char at[512];
    mica_status_t st = range_of(net, profile, input, origin, &r, &i);

    if (st != MICA_OK)
        return st;
    in = &net->inputs[i];
    mica__at(origin, at, sizeof at);
    if (in->is_shape)
        return mica__fail(net->ctx, MICA_ERR_INVALID,
                          "%sprofile %d: input '%s' is a shape tensor: give "
                          "its values (min/opt/max values), not dims", at,
                          (int)profile, input);
    if (min->nb_dims != in->dims.nb_dims || opt->nb_dims != in->dims.nb_dims ||
        max->nb_dims != in->dims.nb_dims)
        return mica__fail(net->ctx, MICA_ERR_INVALID,
                          "%sprofile %d: input '%s' has rank %d, but its "
                          "min/opt/max have ranks %d/%d/%d", at, (int)profile,
                          input, (int)in->dims.nb_dims, (int)min->nb_dims,
                          (int)opt->nb_dims, (int)max->nb_dims);
    for (k = 0; k < in->dims.nb_dims; k++) {
        if (min->d[k] < 0 || min->d[k] > opt->d[k] || opt->d[k] > max->d[k])
            return mica__fail(net->ctx, MICA_ERR_INVALID,
                              "%sprofile %d: input '%s' dimension %d needs "
                              "0 <= min <= opt <= max, got %lld/%lld/%lld",
                              at, (int)profile, input, (int)k,
                              (long long)min->d[k], (long long)opt->d[k],
                              (long long)max->d[k]);
        if (in->dims.d[k] >= 0 && (min->d[k] != in->dims.d[k] ||
                                   max->d[k] != in->dims.d[k]))
            return mica__fail(net->ctx, MICA_ERR_INVALID,
                              "%sprofile %d: input '%s' dimension %d is "
                              "fixed at %lld, but the profile gives "
                              "%lld..%lld", at, (int)profile, input, (int)k,
                              (long long)in->dims.d[k], (long long)min->d[k],
                              (long long)max->d[k]);
    }
    {
        char what[768];
        int64_t bytes;
        snprintf(what, sizeof what, "%sprofile %d: input '%s' at its max",
                 at, (int)profile, input);
        if (mica__tensor_bytes(net->ctx, what, max, in->dtype, &bytes) !=
            MICA_OK)
            return MICA_ERR_INVALID;
    }
    r->min = *min;
    r->opt = *opt;
    r->max = *max;
    r->origin = mica__strdup(origin);
    r->set = 1;
    return MICA_OK;
}

mica_status_t mica_network_set_profile_values(mica_network_t *net,
                                              int32_t profile,
                                              const char *input, int32_t nb,
                                              const int32_t *min,
                                              const int32_t *opt,
                                              const int32_t *max,
                                              const char *origin)
{
    int32_t i, k;
    mica__range_t *r;
    const mica__net_input_t *in;
    char at[512];
    size_t bytes;
    mica_status_t st = range_of(net, profile, input, origin, &r, &i);

    if (st != MICA_OK)
        return st;
    in = &net->inputs[i];
    mica__at(origin, at, sizeof at);
    if (!in->is_shape)
        return mica__fail(net->ctx, MICA_ERR_INVALID,
                          "%sprofile %d: input '%s' is not a shape tensor: "
                          "give its dims (min/opt/max), not values", at,
                          (int)profile, input);
    if (nb != (int32_t)mica_dims_volume(&in->dims))
        return mica__fail(net->ctx, MICA_ERR_INVALID,
                          "%sprofile %d: shape-tensor input '%s' has %lld "
                          "values, but the profile gives %d", at,
                          (int)profile, input,
                          (long long)mica_dims_volume(&in->dims), (int)nb);
    for (k = 0; k < nb; k++)
        if (min[k] > opt[k] || opt[k] > max[k])
            return mica__fail(net->ctx, MICA_ERR_INVALID,
                              "%sprofile %d: value %d of input '%s' needs "
                              "min <= opt <= max, got %d/%d/%d", at,
                              (int)profile, (int)k, input, (int)min[k],
                              (int)opt[k], (int)max[k]);
    bytes = sizeof(int32_t) * (size_t)(nb > 0 ? nb : 1);
    r->vmin = malloc(bytes);
    r->vopt = malloc(bytes);
    r->vmax = malloc(bytes);
    if (!r->vmin || !r->vopt || !r->vmax) {
        mica__range_free(r);
        memset(r, 0, sizeof *r);
        return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    if (nb > 0) {
        memcpy(r->vmin, min, bytes);
        memcpy(r->vopt, opt, bytes);
        memcpy(r->vmax, max, bytes);
    }
    r->min = r->opt = r->max = in->dims;
    r->nb_values = nb;
    r->origin = mica__strdup(origin);
    r->set = 1;
    return MICA_OK;
}
