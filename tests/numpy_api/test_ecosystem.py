"""arc4py where numpy's random objects go: dask (threads, processes, a
2-worker distributed.LocalCluster on loopback), scipy, scikit-learn and
pandas, each recipe of docs/ecosystem.rst.  Each library's tests skip,
saying so, where it is not installed (CI's integration venv has them all)."""
import os
import pickle

import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed "
                         "(pip install 'arc4py[numpy]')")

import arc4py  # noqa: E402


def _need(module, pip):
    return pytest.importorskip(module, reason=f"{module} is not installed "
                               f"(pip install {pip})")


def _arc4py_random_state():
    """The scikit-learn recipe: numpy's RandomState over arc4py."""
    return np.random.RandomState(arc4py.BitGenerator())


# ---- dask ---------------------------------------------------------------------------
# dask.array.random.Generator builds a numpy generator in each task from a
# seed sequence spawned from the bit generator's (arc4py's holds no seed);
# dask.array.random.RandomState takes any factory of RandomState objects.

def arc4py_random_state(seed_ignored):
    """The dask recipe's factory: dask passes it seed data drawn from an
    OS-seeded MT19937 for each chunk; arc4py has no use for a seed."""
    return np.random.RandomState(arc4py.BitGenerator())


def _dask_random_state():
    da = _need("dask.array", '"dask[array]"')
    return da.random.RandomState(RandomState=arc4py_random_state)


def _chunks(x):
    """The 16 chunks of an (8, 8) array in 2x2 chunks, as bytes."""
    return [x[i:i + 2, j:j + 2].tobytes()
            for i in range(0, 8, 2) for j in range(0, 8, 2)]


def _check_16_distinct_chunks(x):
    assert x.shape == (8, 8) and x.dtype == np.float64
    assert ((0.0 <= x) & (x < 1.0)).all()
    assert len(set(_chunks(x))) == 16
    assert len(np.unique(x)) == 64


# worker processes and a cluster take seconds to start: the slow set
@pytest.mark.parametrize("scheduler", ["threads", "synchronous", pytest.param(
    "processes", marks=pytest.mark.slow)])
def test_dask_random_state_recipe(scheduler):
    rs = _dask_random_state()
    x = rs.random_sample((8, 8), chunks=2)
    assert x.numblocks == (4, 4)
    _check_16_distinct_chunks(x.compute(scheduler=scheduler, num_workers=2))
    dice = rs.randint(1, 7, size=100, chunks=10).compute(scheduler=scheduler)
    assert set(dice.tolist()) <= set(range(1, 7))
    assert rs.normal(size=(4,), chunks=2).compute(scheduler=scheduler).shape == (4,)


def test_dask_arrays_never_share_keys_or_values():
    rs = _dask_random_state()
    import dask
    a, b = rs.random_sample((8, 8), chunks=2), rs.random_sample((8, 8), chunks=2)
    assert a.name != b.name
    seen = [set(_chunks(v)) for v in dask.compute(a, b, scheduler="threads")]
    assert len(seen[0] | seen[1]) == 32


def test_dask_graph_replays_nothing():
    # What dask ships is the graph: running the same graph again, or a
    # pickled copy of it, draws new values.
    rs = _dask_random_state()
    x = rs.random_sample((8, 8), chunks=2)
    assert len(dict(x.__dask_graph__())) == 16
    shipped = pickle.dumps(x)
    # the tasks make their RandomState with the recipe, where they run
    assert b"arc4py_random_state" in shipped
    runs = [x.compute(scheduler="threads"),
            x.compute(scheduler="threads"),
            pickle.loads(shipped).compute(scheduler="threads")]
    seen = [set(_chunks(r)) for r in runs]
    assert not seen[0] & seen[1] and not seen[1] & seen[2]


def test_dask_map_blocks_with_two_generators_are_two_arrays():
    # dask names work by the pickle of its arguments: two arc4py generators
    # must not pickle alike, or both arrays would be one computation.
    da = _need("dask.array", '"dask[array]"')
    if tuple(int(p) for p in np.__version__.split(".")[:2]) < (2, 0):
        gens = [arc4py.default_rng(), arc4py.default_rng()]
    else:
        gens = [arc4py.default_rng(), arc4py.default_rng(),
                np.random.Generator(arc4py.BitGenerator())]
    zeros = da.zeros((8, 8), chunks=2)
    arrays = [zeros.map_blocks(lambda b, rng: b + rng.random(b.shape), g)
              for g in gens]
    assert len({a.name for a in arrays}) == len(arrays)
    import dask
    seen = [set(_chunks(v)) for v in dask.compute(*arrays, scheduler="threads")]
    assert len(set().union(*seen)) == 16 * len(arrays)


def test_dask_generator_api_fails_when_the_array_is_made():
    # docs/ecosystem.rst: dask rebuilds numpy's default_rng (PCG64) from each
    # chunk's seed sequence, and arc4py's holds no seed
    da = _need("dask.array", '"dask[array]"')
    rng = da.random.default_rng(arc4py.default_rng())
    with pytest.raises(NotImplementedError,
                       match="seedless SeedSequences cannot generate state"):
        rng.random(4, chunks=2)    # before any compute()


def test_dask_bit_generator_as_seed_draws_mersenne_twister(monkeypatch):
    # docs/ecosystem.rst's silent fallback: arc4py's output only seeds one
    # MT19937 per chunk, and the chunk is that Mersenne Twister's output
    da = _need("dask.array", '"dask[array]"')
    import dask.array.random as dask_random
    seeds = []
    real = dask_random.random_state_data

    def recorded(n, random_state=None):
        out = real(n, random_state)
        seeds.extend(out)
        return out

    monkeypatch.setattr(dask_random, "random_state_data", recorded)
    x = da.random.RandomState(arc4py.BitGenerator()).random_sample(6, chunks=2)
    values = x.compute(scheduler="synchronous")
    assert len(seeds) == 3
    mt = [np.random.RandomState(seed).random_sample(2) for seed in seeds]
    assert np.array_equal(values, np.concatenate(mt))


def test_dask_choice_under_a_factory_fails_and_randint_stands_in():
    rs = _dask_random_state()
    with pytest.raises(ModuleNotFoundError, match="'function'"):
        rs.choice(10, size=4, chunks=2)
    picks = rs.randint(0, 10, size=4, chunks=2).compute(scheduler="threads")
    assert picks.shape == (4,) and set(picks.tolist()) <= set(range(10))
    assert sorted(rs.permutation(10).compute().tolist()) == list(range(10))


@pytest.mark.slow
def test_dask_distributed_local_cluster():
    rs = _dask_random_state()
    distributed = _need("distributed", '"dask[distributed]"')
    with distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True,
            host="127.0.0.1", dashboard_address=None, silence_logs=40,
            death_timeout=60) as cluster, \
            distributed.Client(cluster, timeout="60s") as client:
        workers = client.run(os.getpid, nanny=False)
        assert len(workers) == 2 and os.getpid() not in workers.values()
        x = client.persist(rs.random_sample((8, 8), chunks=2))
        distributed.wait(x, timeout=120)
        # each chunk is held by a worker, drawn there: the graph carries no
        # values (test_dask_graph_replays_nothing), only the recipe
        where = client.who_has(x)
        assert len(where) == 16
        assert all(w and set(w) <= set(workers) for w in where.values())
        _check_16_distinct_chunks(client.compute(x).result(timeout=120))
    assert cluster.status.name == "closed"


# ---- scipy ----------------------------------------------------------------------------

@pytest.mark.parametrize("keyword", ["rng", "seed"])
def test_scipy_qmc_sobol_scrambles_from_arc4py(keyword):
    qmc = _need("scipy.stats.qmc", "scipy")
    import inspect
    import warnings
    if keyword not in inspect.signature(qmc.Sobol).parameters:
        pytest.skip(f"this scipy's Sobol takes no {keyword}=")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        engines = [qmc.Sobol(2, scramble=True, **{keyword: arc4py.default_rng()})
                   for _ in range(2)]
    points = [e.random_base2(4) for e in engines]
    for p in points:
        assert p.shape == (16, 2) and ((0 <= p) & (p < 1)).all()
        # still a Sobol point set: one point in each 1/16 of each axis
        assert sorted(np.floor(p[:, 0] * 16).tolist()) == list(range(16))
    assert not np.array_equal(points[0], points[1])   # two scrambles
    # the scrambling is drawn once, when the engine is made: reset() starts
    # that same point set over, as with numpy's generators
    engines[0].reset()
    assert np.array_equal(engines[0].random_base2(4), points[0])


def test_scipy_other_qmc_engines():
    qmc = _need("scipy.stats.qmc", "scipy")
    for engine in (qmc.Halton(3, rng=arc4py.default_rng()),
                   qmc.LatinHypercube(3, rng=arc4py.default_rng())):
        p = engine.random(8)
        assert p.shape == (8, 3) and ((0 <= p) & (p < 1)).all()


def test_scipy_rvs_random_state():
    stats = _need("scipy.stats", "scipy")
    for rs in (arc4py.default_rng(), _arc4py_random_state()):
        x = stats.norm.rvs(loc=5, size=1000, random_state=rs)
        assert x.shape == (1000,) and 4.5 < x.mean() < 5.5
        assert stats.norm(loc=5).rvs(size=3, random_state=rs).shape == (3,)
        assert stats.poisson.rvs(3, size=5, random_state=rs).dtype.kind == "i"


# ---- scikit-learn --------------------------------------------------------------------

def _sklearn_data():
    _need("sklearn", "scikit-learn")
    from sklearn.datasets import make_classification
    return make_classification(n_samples=60, n_features=4,
                               random_state=_arc4py_random_state())


def test_sklearn_check_random_state_takes_the_recipe():
    _need("sklearn", "scikit-learn")
    from sklearn.utils import check_random_state
    rs = _arc4py_random_state()
    assert check_random_state(rs) is rs
    assert isinstance(rs._bit_generator, arc4py.BitGenerator)
    # why the recipe: scikit-learn takes a RandomState, not a Generator
    with pytest.raises(ValueError):
        check_random_state(arc4py.default_rng())


def test_sklearn_cross_validation_shuffle():
    X, y = _sklearn_data()
    from sklearn.model_selection import KFold, train_test_split
    folds = [[test.tolist() for _, test in
              KFold(5, shuffle=True, random_state=_arc4py_random_state()).split(X)]
             for _ in range(2)]
    for f in folds:
        assert sorted(i for test in f for i in test) == list(range(60))
    assert folds[0] != folds[1]
    X_train, X_test, _, _ = train_test_split(X, y,
                                             random_state=_arc4py_random_state())
    assert len(X_train) == 45 and len(X_test) == 15


def test_sklearn_clone_and_joblib_two_jobs():
    X, y = _sklearn_data()
    from sklearn.base import clone
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import KFold, cross_val_score
    forest = RandomForestClassifier(n_estimators=4, n_jobs=2,
                                    random_state=_arc4py_random_state())
    twin = clone(forest)
    assert twin.random_state is not forest.random_state
    assert isinstance(twin.random_state._bit_generator, arc4py.BitGenerator)
    twin.fit(X, y)
    # loky worker processes: each receives a new generator, not a copy
    scores = cross_val_score(forest, X, y, n_jobs=2,
                             cv=KFold(3, shuffle=True,
                                      random_state=_arc4py_random_state()))
    assert len(scores) == 3 and all(0.0 <= s <= 1.0 for s in scores)


# ---- pandas -------------------------------------------------------------------------

def test_pandas_sample():
    pd = _need("pandas", "pandas")
    df = pd.DataFrame({"x": range(100)})
    for rs in (arc4py.default_rng(), arc4py.BitGenerator(),
               _arc4py_random_state()):
        picked = df.sample(n=10, random_state=rs)["x"].tolist()
        assert len(set(picked)) == 10 and set(picked) <= set(range(100))
        shuffled = df.sample(frac=1, random_state=rs)["x"].tolist()
        assert sorted(shuffled) == list(range(100))
        assert df["x"].sample(3, replace=True, random_state=rs).size == 3
