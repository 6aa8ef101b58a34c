/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (c) 2026 The trn authors
 *
 * Every difference between the kernels trn supports lives here, as
 * wrappers that let the driver read like current upstream code. Which side
 * of each difference the target kernel is on is decided by the build-time
 * probes in compat/probes/ (see scripts/compat-probe.sh), never by version
 * numbers.
 */
#ifndef __TRN_COMPAT_H__
#define __TRN_COMPAT_H__

#include "trn_compat_probed.h"

#endif /* __TRN_COMPAT_H__ */
