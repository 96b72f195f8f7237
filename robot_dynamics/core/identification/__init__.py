"""Recordings and identification: payload, whole-robot parameters, covariance, friction fit,
excitation."""
