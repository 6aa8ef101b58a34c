// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * What operators are told about a device: its health (sysfs health and
 * health_reason) and events, each a KOBJ_CHANGE uevent of the accel node
 * with TRN_EVENT=reset|fault|ban|health (Documentation/ABI/testing/
 * sysfs-driver-trn, execution.md "Health and events").
 *
 * The paths that notice events hold spinlocks, run in a fence-signalling
 * section or in a backend's interrupt path: trn_event() only sets a bit
 * and queues the event work, which sends the uevents. A tenant can fault
 * thousands of times a second, so events of one kind coalesce: the work
 * sends each pending kind once per run, and while events keep coming its
 * runs are TRN_EVENT_GAP apart.
 *
 * Health is the device's, not a tenant's: a ring reset (a tenant's job
 * hung) or a fault is not a device problem, a device reset (a ring that
 * could not be reset) or a job failed by the device (DEVICE_ERROR) is. The
 * device is "degraded" for health_window_s seconds after the latest such
 * trouble; "failed" once wedged (a device reset failed) or once its
 * backend reported that it stopped answering (trn_device_error()); else
 * "ok".
 */

#include <linux/export.h>
#include <linux/jiffies.h>
#include <linux/kobject.h>
#include <linux/moduleparam.h>
#include <linux/workqueue.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "trn_drv.h"

static unsigned int health_window_s = 300;
module_param(health_window_s, uint, 0644);
MODULE_PARM_DESC(health_window_s,
		 "Seconds a device stays degraded after a device reset or device error (default 300)");

/* Uevents of one kind at most this often. */
#define TRN_EVENT_GAP	(HZ / 10)

static const char *const trn_event_names[TRN_EVENT_COUNT] = {
	[TRN_EVENT_RESET] = "reset",
	[TRN_EVENT_FAULT] = "fault",
	[TRN_EVENT_BAN] = "ban",
	[TRN_EVENT_HEALTH] = "health",
};

static const char *const trn_health_names[] = {
	[TRN_HEALTH_OK] = "ok",
	[TRN_HEALTH_DEGRADED] = "degraded",
	[TRN_HEALTH_FAILED] = "failed",
};

static const char *const trn_trouble_names[] = {
	[TRN_TROUBLE_DEVICE_RESET] = "device reset",
	[TRN_TROUBLE_DEVICE_ERROR] = "device error",
};

/**
 * trn_health_name() - the sysfs and uevent spelling of a health state
 * @health: the state
 *
 * Return: "ok", "degraded" or "failed".
 */
const char *trn_health_name(enum trn_health health)
{
	return trn_health_names[health];
}

static unsigned long trn_health_window(void)
{
	return (unsigned long)READ_ONCE(health_window_s) * HZ;
}

/**
 * trn_health() - the device's health now
 * @tdev: the device
 * @reason: if not NULL, a one-line reason is written here
 * @size: bytes at @reason
 *
 * Return: the state.
 */
enum trn_health trn_health(struct trn_device *tdev, char *reason,
			   size_t size)
{
	u64 at = atomic64_read(&tdev->health.trouble_at);
	u32 kind = READ_ONCE(tdev->health.trouble);
	u64 now = get_jiffies_64();

	if (READ_ONCE(tdev->wedged)) {
		if (reason)
			snprintf(reason, size,
				 "a device reset failed: every job fails with -EIO");
		return TRN_HEALTH_FAILED;
	}
	if (READ_ONCE(tdev->health.lost)) {
		if (reason)
			snprintf(reason, size, "the device stopped answering");
		return TRN_HEALTH_FAILED;
	}
	if (at && time_before64(now, at + trn_health_window())) {
		if (reason)
			snprintf(reason, size, "%s %llu s ago",
				 trn_trouble_names[kind],
				 div_u64(now - at, HZ));
		return TRN_HEALTH_DEGRADED;
	}
	if (reason && size)
		reason[0] = '\0';
	return TRN_HEALTH_OK;
}

/**
 * trn_event() - record an event for the operator
 * @tdev: the device
 * @ev: what happened
 *
 * Any context; allocates nothing. Events before the device is registered
 * (nobody could see them: no node yet) or after it was unplugged are
 * dropped.
 */
void trn_event(struct trn_device *tdev, enum trn_event ev)
{
	unsigned long next, now = jiffies;
	int idx;

	if (!READ_ONCE(tdev->drm.registered) || !drm_dev_enter(&tdev->drm, &idx))
		return;
	set_bit(ev, &tdev->health.pending);
	/*
	 * An absolute time, so that a stream of events does not push the
	 * work out; and it brings forward a run queued for the end of a
	 * degraded window.
	 */
	next = READ_ONCE(tdev->health.sent) + TRN_EVENT_GAP;
	mod_delayed_work(system_wq, &tdev->health.work,
			 time_after(next, now) ? next - now : 0);
	drm_dev_exit(idx);
}

/**
 * trn_health_trouble() - the device itself had trouble
 * @tdev: the device
 * @trouble: what
 *
 * Makes the device degraded for health_window_s and reports the change.
 * Any context.
 */
void trn_health_trouble(struct trn_device *tdev, enum trn_trouble trouble)
{
	WRITE_ONCE(tdev->health.trouble, trouble);
	atomic64_set(&tdev->health.trouble_at, get_jiffies_64());
	trn_event(tdev, TRN_EVENT_HEALTH);
}

/**
 * trn_device_error() - a backend reports trouble of the device itself
 * @tdev: the device
 * @error: what the backend saw
 *
 * For trouble no job caused (a job the device failed reports its own, as
 * %DRM_TRN_STATUS_DEVICE_ERROR). %TRN_HW_ERROR_NOT_ANSWERING makes the
 * device's health "failed" for as long as it is registered, with its
 * health uevent. Jobs are not touched: the backend ends those the device
 * will not finish.
 *
 * Context: any context; allocates nothing. Reporting again is harmless.
 */
void trn_device_error(struct trn_device *tdev, enum trn_hw_error error)
{
	switch (error) {
	case TRN_HW_ERROR_NOT_ANSWERING:
		if (!READ_ONCE(tdev->health.lost)) {
			WRITE_ONCE(tdev->health.lost, true);
			trn_event(tdev, TRN_EVENT_HEALTH);
		}
		break;
	}
}
EXPORT_SYMBOL_GPL(trn_device_error);

static void trn_uevent(struct trn_device *tdev, const char *event,
		       const char *health)
{
	char ev[32], he[32], *envp[3];

	snprintf(ev, sizeof(ev), "TRN_EVENT=%s", event);
	snprintf(he, sizeof(he), "TRN_HEALTH=%s", health);
	envp[0] = ev;
	envp[1] = he;
	envp[2] = NULL;
	kobject_uevent_env(&tdev->drm.accel->kdev->kobj, KOBJ_CHANGE, envp);
}

static void trn_health_work(struct work_struct *work)
{
	struct trn_device *tdev = container_of(to_delayed_work(work),
					       struct trn_device, health.work);
	enum trn_health health;
	unsigned int ev;
	int idx;

	if (!drm_dev_enter(&tdev->drm, &idx))
		return;
	WRITE_ONCE(tdev->health.sent, jiffies);
	health = trn_health(tdev, NULL, 0);
	/* Health is told when it changed, however it changed. */
	clear_bit(TRN_EVENT_HEALTH, &tdev->health.pending);
	if (health != tdev->health.reported) {
		trn_uevent(tdev, trn_event_names[TRN_EVENT_HEALTH],
			   trn_health_name(health));
		tdev->health.reported = health;
	}
	for (ev = 0; ev < TRN_EVENT_COUNT; ev++)
		if (test_and_clear_bit(ev, &tdev->health.pending))
			trn_uevent(tdev, trn_event_names[ev],
				   trn_health_name(health));
	/* Degraded ends by itself: look again when the window closes. */
	if (health == TRN_HEALTH_DEGRADED) {
		u64 end = atomic64_read(&tdev->health.trouble_at) +
			  trn_health_window();
		u64 now = get_jiffies_64();

		queue_delayed_work(system_wq, &tdev->health.work,
				   end > now ? (unsigned long)(end - now) + 1 : 1);
	}
	drm_dev_exit(idx);
}

/**
 * trn_health_init() - set up a device's health and events
 * @tdev: the device, not registered yet
 */
void trn_health_init(struct trn_device *tdev)
{
	INIT_DELAYED_WORK(&tdev->health.work, trn_health_work);
	atomic64_set(&tdev->health.trouble_at, 0);
	tdev->health.reported = TRN_HEALTH_OK;
}

/**
 * trn_health_fini() - stop reporting, after the device was unplugged
 * @tdev: the device
 *
 * No event is queued after drm_dev_unplug() returned (trn_event() runs
 * under drm_dev_enter()), so none runs after this.
 */
void trn_health_fini(struct trn_device *tdev)
{
	cancel_delayed_work_sync(&tdev->health.work);
}
