/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nfqb-bench: the DAQ consumers (daqtest; they fail with a message in a
 * build without the DAQ module). */
#ifndef NFQB_BENCH_DAQ_H
#define NFQB_BENCH_DAQ_H

#include "nfqb-bench-types.h"

int bench_daq_nfq(const struct bench_cfg *cfg, struct bench_cons *c);
int bench_daq_nfqb(const struct bench_cfg *cfg, struct bench_cons *c);

#endif /* NFQB_BENCH_DAQ_H */
