"""Local fakes of outside services (model providers) that speak the real wire protocols over HTTP."""
