"""The kf.random namespace (tf.random): re-exports only."""
from types import SimpleNamespace as _Namespace

from kilnflow.ops.random import categorical as categorical
from kilnflow.ops.random import gamma as gamma
from kilnflow.ops.random import normal as normal
from kilnflow.ops.random import poisson as poisson
from kilnflow.ops.random import set_seed as set_seed
from kilnflow.ops.random import shuffle as shuffle
from kilnflow.ops.random import truncated_normal as truncated_normal
from kilnflow.ops.random import uniform as uniform
from kilnflow.ops.random_generator import Algorithm as Algorithm
from kilnflow.ops.random_generator import Generator as Generator
from kilnflow.ops.random_generator import create_rng_state as create_rng_state
from kilnflow.ops.random_generator import get_global_generator as get_global_generator
from kilnflow.ops.random_generator import set_global_generator as set_global_generator
from kilnflow.ops.stateless_random import index_shuffle as _index_shuffle
from kilnflow.ops.stateless_random import stateless_binomial as stateless_binomial
from kilnflow.ops.stateless_random import stateless_categorical as stateless_categorical
from kilnflow.ops.stateless_random import stateless_fold_in as fold_in
from kilnflow.ops.stateless_random import stateless_gamma as stateless_gamma
from kilnflow.ops.stateless_random import stateless_normal as stateless_normal
from kilnflow.ops.stateless_random import stateless_parameterized_truncated_normal as \
    stateless_parameterized_truncated_normal
from kilnflow.ops.stateless_random import stateless_poisson as stateless_poisson
from kilnflow.ops.stateless_random import stateless_shuffle as _stateless_shuffle
from kilnflow.ops.stateless_random import stateless_split as split
from kilnflow.ops.stateless_random import stateless_truncated_normal as \
    stateless_truncated_normal
from kilnflow.ops.stateless_random import stateless_uniform as stateless_uniform
from kilnflow.ops.candidate_sampling import uniform_candidate_sampler as uniform_candidate_sampler
from kilnflow.ops.candidate_sampling import log_uniform_candidate_sampler as \
    log_uniform_candidate_sampler
from kilnflow.ops.candidate_sampling import learned_unigram_candidate_sampler as \
    learned_unigram_candidate_sampler
from kilnflow.ops.candidate_sampling import fixed_unigram_candidate_sampler as \
    fixed_unigram_candidate_sampler
from kilnflow.ops.candidate_sampling import all_candidate_sampler as all_candidate_sampler

# tf.random.experimental: the same objects under TF's experimental names
experimental = _Namespace(
    Algorithm=Algorithm, Generator=Generator, create_rng_state=create_rng_state,
    get_global_generator=get_global_generator, set_global_generator=set_global_generator,
    index_shuffle=_index_shuffle, stateless_fold_in=fold_in,
    stateless_shuffle=_stateless_shuffle, stateless_split=split)
