/** @file Downloading model files from a Hugging Face–style hub: what the hub says of a file, and the checked, resumable download. */
export { DISK_MARGIN_BYTES, downloadFile, partPath, type DownloadOptions, type DownloadProgress, type DownloadResult, type RemoteFile } from './download'
export { DownloadError } from './errors'
export { hubFile, HUGGING_FACE_HUB, isHubFile, isHubRepo, type HubOptions } from './hub'
export { catalogDestination, downloadCatalogModel, isCatalogId, MAX_CATALOG_BYTES, parseCatalog, readCatalog, stagingDir, type CatalogModel, type CatalogProgress } from './catalog'
