"""Installs the drift Python package (the drift program itself is built
and installed by the autotools build at the top of the tree)."""

from setuptools import setup

setup(
    name="drift",
    version="0.1.0",
    description="Python interface to drift, a Bayesian inference engine "
                "with stochastic-gradient and piecewise-deterministic "
                "samplers",
    long_description=open("README.md").read(),
    long_description_content_type="text/markdown",
    license="see LICENSE at the top of drift's tree",
    packages=["drift"],
    python_requires=">=3.8",
    install_requires=["numpy"],
    extras_require={"arviz": ["arviz"], "progress": ["tqdm"],
                    "pandas": ["pandas"]},
)
