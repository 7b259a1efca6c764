enum ServerModule {}
