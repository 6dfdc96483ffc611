// SPDX-License-Identifier: MIT
/*
 * tests/freestanding/rtm_config_tlsf_only.h -- an RTM_CONFIG_HEADER as a
 * firmware team would write it (docs/FIRMWARE.md): only TLSF in the generic
 * API, so only TLSF's sources are compiled, and internal assertions routed
 * to the team's own hook. scripts/check-freestanding.sh links an image
 * with it.
 */
#ifndef RTM_CONFIG_TLSF_ONLY_H
#define RTM_CONFIG_TLSF_ONLY_H

#define RTM_FREESTANDING  1
#define RTM_ALGORITHMS(X) X(tlsf, RTM_KIND_TLSF)

void firmware_assert_failed(int line);
#define RTM_ASSERT(cond) ((cond) ? (void)0 : firmware_assert_failed(__LINE__))

#endif
