enum ArtworkModule {}
