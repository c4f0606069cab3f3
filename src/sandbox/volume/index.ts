/** Size-bounded workspaces: loop-mounted ext4 images (volume.ts), and what they need (system.ts). */
export { deviceOf, loopBackingFile, mountAt } from './mounts.ts';
export { ownPrivileges, type Privileges, volumeUnavailable } from './system.ts';
export { heldVolumeDevice, openVolume, type Volume, type VolumeOptions, type VolumeState } from './volume.ts';
