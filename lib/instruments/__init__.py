"""Instruments read how a trained loop computes; they return arrays and dataclasses, never plots."""
