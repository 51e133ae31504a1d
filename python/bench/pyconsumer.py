# SPDX-License-Identifier: LGPL-2.1-or-later
"""nfqb-bench's Python consumers (nfqb-bench -c py-nfq,py-compat,py-batch).

    python3 pyconsumer.py IMPL [--maxlen N] [--sock-len BYTES]

IMPL:
  pynfq    python-netfilterqueue (its directory on PYTHONPATH), queue 0,
           the callback below
  compat   nfqb.netfilterqueue, the same callback
  batch    nfqb.Queue(0).recv(64), accept() for each packet

The callback accepts every packet and counts it. Runs until SIGTERM, then
prints "packets N" (and for nfqb the library's counters) on stdout, and
"outside_user_ns U outside_sys_ns S": the CPU time it spent before its
queue was bound (the interpreter's start, the imports) and after the stop,
which nfqb-bench takes off the consumer's CPU time: what is measured is
the time per packet, not the interpreter's start.
"""
import argparse
import resource
import signal
import sys


class Stop(Exception):
    pass


count = 0
cpu_bound = None        # CPU time (user, sys) when the queue was bound


def cpu_now():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime, ru.ru_stime



def callback(pkt):
    global count
    count += 1
    pkt.accept()


def on_term(signum, frame):
    # the first SIGTERM stops; later ones (nfqb-bench repeats it) must not
    # kill the process while it reports
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Stop()


def run_callback(mod, args):
    nfq = mod.NetfilterQueue()
    global cpu_bound
    nfq.bind(0, callback, max_len=args.maxlen, sock_len=args.sock_len)
    signal.signal(signal.SIGTERM, on_term)
    stats = None
    cpu_bound = cpu_now()
    try:
        nfq.run()
    except Stop:
        pass
    cpu_stop = cpu_now()
    q = getattr(nfq, "queue", None)
    if q is not None:
        stats = q.stats()
    nfq.unbind()
    return stats, cpu_stop


def run_batch(args):
    import nfqb
    global count, cpu_bound
    stop = []

    def on_term_batch(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stop.append(signum)

    signal.signal(signal.SIGTERM, on_term_batch)
    q = nfqb.Queue(0, maxlen=args.maxlen, rcvbuf=args.sock_len,
                   flags_off=nfqb.F_GSO, buffers=args.buffers)
    cpu_bound = cpu_now()
    while not stop:
        pkts = q.recv(64)
        for p in pkts:
            p.accept()
        count += len(pkts)
    cpu_stop = cpu_now()
    stats = q.stats()
    q.close()
    return stats, cpu_stop


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("impl", choices=("pynfq", "compat", "batch"))
    ap.add_argument("--maxlen", type=int, default=4096)
    ap.add_argument("--sock-len", type=int, default=16 << 20)
    ap.add_argument("--buffers", type=int, default=0)
    args = ap.parse_args()
    if args.impl == "pynfq":
        import netfilterqueue as mod
        stats, cpu_stop = run_callback(mod, args)
    elif args.impl == "compat":
        import nfqb.netfilterqueue as mod
        stats, cpu_stop = run_callback(mod, args)
    else:
        stats, cpu_stop = run_batch(args)
    print("packets %d" % count)
    if stats:
        print(" ".join("%s %d" % kv for kv in sorted(stats.items())))
    end = cpu_now()
    print("outside_user_ns %d outside_sys_ns %d" % tuple(
        int(1e9 * (cpu_bound[i] + end[i] - cpu_stop[i])) for i in (0, 1)))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
