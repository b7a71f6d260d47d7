"""What can go wrong with a cluster, from the caller's point of view."""


class ClusterError(RuntimeError):
    """The cluster could not be brought to the asked state; the message says why."""


class ClusterRefused(ClusterError):
    """`up` refused before making anything: the asked cluster does not fit the machine,
    or a cluster of that name already exists."""


class ClusterExists(ClusterRefused):
    """A cluster of that name already exists and replacing it was not asked for."""
