"""Plots and the HTML report of one run."""
