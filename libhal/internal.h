/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The trn authors
 *
 * Internal declarations of libtrnhal. The host unit tests build the library
 * with TRNHAL_TESTING, which points the sysfs and /dev roots at a fake tree
 * and routes every ioctl through a replaceable function.
 */
#ifndef TRNHAL_INTERNAL_H
#define TRNHAL_INTERNAL_H

#include <stddef.h>

#define TRN_PUBLIC __attribute__((visibility("default")))

#ifdef TRNHAL_TESTING
extern const char *trnhal_test_sysfs_root;
extern const char *trnhal_test_dev_root;
extern int (*trnhal_test_ioctl)(int fd, unsigned long request, void *arg);
size_t trnhal_test_registry_size(void);

#define TRN_SYSFS_ACCEL		trnhal_test_sysfs_root
#define TRN_DEV_ACCEL		trnhal_test_dev_root
#define trn_ioctl(fd, req, arg)	trnhal_test_ioctl(fd, req, arg)
#else
#define TRN_SYSFS_ACCEL		"/sys/class/accel"
#define TRN_DEV_ACCEL		"/dev/accel"
#define trn_ioctl(fd, req, arg)	drmIoctl(fd, req, arg)
#endif

#endif /* TRNHAL_INTERNAL_H */
