"""Users: the public profile of any wallet and the ``me`` routes of the signed-in wallet."""
