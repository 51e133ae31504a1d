# SPDX-License-Identifier: LGPL-2.1-or-later
"""Trio mode, ours: an ``async def`` test runs under ``trio.run()``, its
async fixtures (async generators, coroutines) set up in the same run,
before it, in the test's own task, and torn down after it, in reverse
order. Star-imported into a conftest.py, the hook below becomes the
conftest's. Written for python/tests/run-upstream.sh; not pytest-trio."""
import inspect

import pytest
import trio

__all__ = ["pytest_pyfunc_call"]


async def _run_test(fn, kwargs):
    gens = []
    try:
        for name, value in list(kwargs.items()):
            if inspect.isasyncgen(value):
                kwargs[name] = await value.__anext__()
                gens.append(value)
            elif inspect.iscoroutine(value):
                kwargs[name] = await value
        await fn(**kwargs)
    except BaseException as exc:
        # the fixtures see the test's exception at their yield
        for gen in reversed(gens):
            try:
                await gen.athrow(exc)
            except BaseException:
                pass
        raise
    for gen in reversed(gens):
        try:
            await gen.__anext__()
        except StopAsyncIteration:
            continue
        raise RuntimeError("an async fixture yielded twice")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    fn = pyfuncitem.obj
    if not inspect.iscoroutinefunction(fn):
        return None
    names = pyfuncitem._fixtureinfo.argnames
    kwargs = {name: pyfuncitem.funcargs[name] for name in names}
    trio.run(_run_test, fn, kwargs)
    return True
