#!/usr/bin/env python3
"""The documented Spark check of `pisces export --parquet` (not part of CI): reads the
tables with Spark, partitions from the paths, and prints the cost per agent and month and
the number of sessions per agent, for comparison with DuckDB's answers and `pisces stats`.

Needs `pip install pyspark` and a Java runtime (Debian: apt-get install default-jre).
Usage: tools/spark-check.py DIR
"""
import sys

from pyspark.sql import SparkSession, functions as F

d = sys.argv[1]
spark = SparkSession.builder.appName("pisces-check").master("local[2]").getOrCreate()
usage = spark.read.parquet(f"{d}/usage")
usage.groupBy("agent", "month").agg(F.count("*").alias("responses"), F.sum("cost").alias("cost"),
                                    F.sum("tokens").alias("tokens")).orderBy("agent", "month").show(truncate=False)
print("total cost:", usage.agg(F.sum("cost")).first()[0], "responses:", usage.count())
spark.read.parquet(f"{d}/sessions").groupBy("agent").agg(F.count("*").alias("sessions"),
                                                          F.sum("entries").alias("entries")).orderBy("agent").show()
spark.stop()
