"""Collectives: how compiled programs all-reduce across replicas (MPI ranks or threads)."""
from .communicator import REDUCE_KINDS, Communicator, current_communicator, using

__all__ = ["Communicator", "REDUCE_KINDS", "current_communicator", "using"]
