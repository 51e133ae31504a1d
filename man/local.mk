# SPDX-License-Identifier: LGPL-2.1-or-later
# man: the section 3 pages of the public API (top-relative paths, += only).
# One page per group of functions; every other function of a group has a
# one-line alias page (.so man3/<group>.3).  tests/check-man.sh checks that
# every function in the public headers has a page and that the pages format
# without warnings.  (man8 pages are listed by their tools' local.mk.)

dist_man_MANS += \
	man/man3/libnfq-batch.3 \
	man/man3/nfqb_pool_adopt.3 \
	man/man3/nfqb_pool_handover.3 \
	man/man3/nfqb_queue_adopt.3 \
	man/man3/nfqb_queue_detach.3 \
	man/man3/nfqb_dispatch.3 \
	man/man3/nfqb_flush.3 \
	man/man3/nfqb_hdrs_parse.3 \
	man/man3/nfqb_pkt_hdrs.3 \
	man/man3/nfqb_csum_ipv4_hdr.3 \
	man/man3/nfqb_csum_update16.3 \
	man/man3/nfqb_csum_update32.3 \
	man/man3/nfqb_csum_fix.3 \
	man/man3/nfqb_tcp_mss_clamp.3 \
	man/man3/nfqb_verdict_payload.3 \
	man/man3/nfqb_kstats_get.3 \
	man/man3/nfqb_kstats_read.3 \
	man/man3/nfqb_pkt_attr.3 \
	man/man3/nfqb_pkt_cgroup_classid.3 \
	man/man3/nfqb_pkt_csum_not_ready.3 \
	man/man3/nfqb_pkt_csum_not_verified.3 \
	man/man3/nfqb_pkt_ct.3 \
	man/man3/nfqb_pkt_ct_id.3 \
	man/man3/nfqb_pkt_ct_info.3 \
	man/man3/nfqb_pkt_family.3 \
	man/man3/nfqb_pkt_gid.3 \
	man/man3/nfqb_pkt_hook.3 \
	man/man3/nfqb_pkt_hook_point.3 \
	man/man3/nfqb_pkt_hw_protocol.3 \
	man/man3/nfqb_pkt_hwaddr.3 \
	man/man3/nfqb_pkt_id.3 \
	man/man3/nfqb_pkt_indev.3 \
	man/man3/nfqb_pkt_is_gso.3 \
	man/man3/nfqb_pkt_l2hdr.3 \
	man/man3/nfqb_pkt_mark.3 \
	man/man3/nfqb_pkt_network_offset.3 \
	man/man3/nfqb_pkt_orig_len.3 \
	man/man3/nfqb_pkt_outdev.3 \
	man/man3/nfqb_pkt_payload.3 \
	man/man3/nfqb_pkt_physindev.3 \
	man/man3/nfqb_pkt_physoutdev.3 \
	man/man3/nfqb_pkt_priority.3 \
	man/man3/nfqb_pkt_queue_num.3 \
	man/man3/nfqb_pkt_secctx.3 \
	man/man3/nfqb_pkt_set_user.3 \
	man/man3/nfqb_pkt_skbinfo.3 \
	man/man3/nfqb_pkt_timestamp.3 \
	man/man3/nfqb_pkt_truncated.3 \
	man/man3/nfqb_pkt_uid.3 \
	man/man3/nfqb_pkt_user.3 \
	man/man3/nfqb_pkt_vlan.3 \
	man/man3/nfqb_pool_create.3 \
	man/man3/nfqb_pool_destroy.3 \
	man/man3/nfqb_pool_queue_stats.3 \
	man/man3/nfqb_pool_set_policy.3 \
	man/man3/nfqb_pool_start.3 \
	man/man3/nfqb_pool_stats.3 \
	man/man3/nfqb_pool_stop.3 \
	man/man3/nfqb_pool_stopping.3 \
	man/man3/nfqb_pool_fd.3 \
	man/man3/nfqb_pool_error.3 \
	man/man3/nfqb_pool_threads.3 \
	man/man3/nfqb_pool_wait.3 \
	man/man3/nfqb_pool_worker_index.3 \
	man/man3/nfqb_queue_close.3 \
	man/man3/nfqb_queue_close_stats.3 \
	man/man3/nfqb_queue_fallback.3 \
	man/man3/nfqb_queue_fd.3 \
	man/man3/nfqb_queue_interrupt.3 \
	man/man3/nfqb_queue_next_timeout.3 \
	man/man3/nfqb_queue_num.3 \
	man/man3/nfqb_queue_open.3 \
	man/man3/nfqb_queue_open_fd.3 \
	man/man3/nfqb_queue_set_batch_limit.3 \
	man/man3/nfqb_queue_set_buffers.3 \
	man/man3/nfqb_queue_set_coalesce.3 \
	man/man3/nfqb_queue_set_copy_mode.3 \
	man/man3/nfqb_queue_set_default_verdict.3 \
	man/man3/nfqb_queue_set_enobufs.3 \
	man/man3/nfqb_queue_set_flags.3 \
	man/man3/nfqb_queue_set_large.3 \
	man/man3/nfqb_queue_set_read_sleep.3 \
	man/man3/nfqb_queue_set_latency.3 \
	man/man3/nfqb_queue_set_linger.3 \
	man/man3/nfqb_queue_set_maxlen.3 \
	man/man3/nfqb_queue_set_nonblock.3 \
	man/man3/nfqb_queue_set_rcvbuf.3 \
	man/man3/nfqb_queue_set_verdict_timeout.3 \
	man/man3/nfqb_queue_set_recv_timeout.3 \
	man/man3/nfqb_queue_set_wake_fd.3 \
	man/man3/nfqb_queue_socket_fd.3 \
	man/man3/nfqb_queue_stats.3 \
	man/man3/nfqb_recv.3 \
	man/man3/nfqb_verdict.3 \
	man/man3/nfqb_verdict_batch.3 \
	man/man3/nfqb_verdict_ex.3 \
	man/man3/nfqb_verdict_ct_mark.3 \
	man/man3/nfqb_verdict_mark.3 \
	man/man3/nfqb_verdict_name.3 \
	man/man3/nfqb_version.3

TESTS += tests/check-man.sh
EXTRA_DIST += tests/check-man.sh
