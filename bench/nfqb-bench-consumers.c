/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfqb-bench: the consumers, one row each: their names, what the run
 * installs for them (queues), what the traffic expects of them (drops,
 * marks) and the function the consumer process runs.
 */
#include "nfqb-bench-consumers.h"
#include "nfqb-bench-daq.h"
#include "nfqb-bench-ext.h"
#include "nfqb-bench-lib.h"
#include "nfqb-bench-py.h"
#include "nfqb-bench-ref.h"

const struct bench_consumer bench_consumers[BENCH_NKINDS] = {
	[BENCH_KERNEL] = {
		.name = "kernel", .label = "kernel only (no rule)",
		.queues = 0,
	},
	[BENCH_REF_A] = {
		.name = "ref-a", .label = "ref A: nfq, verdict/pkt",
		.queues = 1, .run = bench_ref_a,
	},
	[BENCH_REF_B] = {
		.name = "ref-b", .label = "ref B: mnl, batch 64",
		.queues = 1, .run = bench_ref_b,
	},
	[BENCH_LIB] = {
		.name = "lib", .label = "nfqb all-accept",
		.queues = 1, .run = bench_lib,
	},
	[BENCH_LIB_MIXED] = {
		.name = "lib-mixed", .label = "nfqb mixed",
		.queues = 1, .drops = true, .marks = true,
		.run = bench_lib_mixed,
	},
	[BENCH_LIB_POOL2] = {
		.name = "lib-pool2", .label = "nfqb pool, 2 queues",
		.queues = 2, .run = bench_lib_pool2,
	},
	/* daqtest -p on the stock module and on ours: asked for by name;
	 * without the DAQ module (--with-daq) they fail with a message */
	[BENCH_DAQ_NFQ] = {
		.name = "daq-nfq", .label = "daqtest -p, stock nfq",
		.queues = 1, .run = bench_daq_nfq,
	},
	[BENCH_DAQ_NFQB] = {
		.name = "daq-nfqb", .label = "daqtest -p, daq_nfqb",
		.queues = 1, .run = bench_daq_nfqb,
	},
	/* Python: asked for by name; see nfqb-bench-py.c */
	[BENCH_PY_NFQ] = {
		.name = "py-nfq", .label = "py: netfilterqueue 1.1.0",
		.queues = 1, .run = bench_py_nfq,
	},
	[BENCH_PY_COMPAT] = {
		.name = "py-compat", .label = "py: nfqb.netfilterqueue",
		.queues = 1, .run = bench_py_compat,
	},
	[BENCH_PY_BATCH] = {
		.name = "py-batch", .label = "py: nfqb.Queue.recv",
		.queues = 1, .run = bench_py_batch,
	},
	/* nfqb-bench-app on two libraries: asked for by name; see
	 * nfqb-bench-ext.c */
	[BENCH_APP] = {
		.name = "app", .label = "app: this library",
		.queues = 1, .run = bench_app,
	},
	[BENCH_APP_OLD] = {
		.name = "app-old", .label = "app-old: old library",
		.queues = 1, .run = bench_app_old,
	},
};
